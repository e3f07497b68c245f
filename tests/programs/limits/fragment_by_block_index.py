# expect: error R300 at 18:38
#
# Issue 24: layout inference decides a fragment access on every value of its context
# variables; x_frag[bx % 2, j] over a grid of 2**15 blocks would be 2**15 passes over the
# loop. At most 2**14 values are enumerated (docs/limits.md), exactly or not at all.
import tilelang.language as T

G = 2**15


@T.prim_func
def main(x: T.Tensor((2, 8), T.float32), y: T.Tensor((G,), T.float32)):
    with T.Kernel(G, threads=32) as bx:
        x_frag = T.alloc_fragment((2, 8), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        for j in T.Parallel(8):
            T.reducer_update(acc[0], x_frag[bx % 2, j])
        res = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, res)
        y[bx] = res[0]
