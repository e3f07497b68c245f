# expect: error R204 at 17
#
# v2 surface: an update before T.reducer_init opened the epoch. The init would then reset
# the partials and drop the contribution.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x_frag[j])  # <- R204
        T.reducer_init(acc)
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
