# expect: ok
# input: x=arange(0, 102)
# expect: result out=[560.0, 1648.0, 2736.0]
#
# Serial rows read at a constant column offset: x_frag[it, j + 2] in a T.Parallel(32)
# over a (3, 34) fragment on 64 threads. The loop never touches columns 0 and 1; they
# still get holders (those of columns 32 and 33, one slot further up), so the whole-tile
# copy writes every element once per replica. Row r sums columns 2..33:
# out[r] = 1088*r + 560.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((3, 34), T.float32), out: T.Tensor((3,), T.float32)):
    with T.Kernel(1, threads=64) as bx:
        x_frag = T.alloc_fragment((3, 34), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        for it in T.serial(3):
            T.reducer_init(acc)
            for j in T.Parallel(32):
                T.reducer_update(acc[0], x_frag[it, j + 2])
            T.finalize_reducer(acc, result)
            out[it] = result[0]
