# expect: ok
# input: x=arange(0, 96)
# expect: result out=[4560.0]
#
# A 1x96 loop on 128 threads: fewer iterations than threads but more than half, so there
# is one replica and threads 96..127 sit the loop out.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((1, 96), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((1, 96), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for i, j in T.Parallel(1, 96):
            T.reducer_update(acc[i], x_frag[i, j])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
