# expect: error R201 at 22
#
# An update after the epoch was finalized: the contribution would be lost (or silently
# start a new, never-finalized reduction).
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x_frag[j])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x_frag[j])  # <- R201
        T.copy(result, out)
