# expect: ok
# input: x=arange(0, 128)
# expect: result out=[192.0, 196.0, 200.0, 204.0, 208.0, 212.0, 216.0, 220.0, 224.0, 228.0, 232.0, 236.0, 240.0, 244.0, 248.0, 252.0, 256.0, 260.0, 264.0, 268.0, 272.0, 276.0, 280.0, 284.0, 288.0, 292.0, 296.0, 300.0, 304.0, 308.0, 312.0, 316.0]
# expect: result total=[8128.0]
#
# Serial rows accumulated across iterations: one epoch spans the whole serial loop.
# acc[j] sums column j over the 4 rows (4*j + 192); total sums every element (8128).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((4, 32), T.float32), out: T.Tensor((32,), T.float32),
         total: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=64) as bx:
        x_frag = T.alloc_fragment((4, 32), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((32,), T.float32, op="sum")
        everything = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        T.reducer_init(everything)
        for it in T.serial(4):
            for j in T.Parallel(32):
                T.reducer_update(acc[j], x_frag[it, j])
                T.reducer_update(everything[0], x_frag[it, j])
        columns = T.alloc_fragment((32,), T.float32)
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, columns)
        T.finalize_reducer(everything, result)
        T.copy(columns, out)
        T.copy(result, total)
