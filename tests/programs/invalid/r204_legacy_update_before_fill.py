# expect: error R204 at 16
#
# Legacy surface: `+=` before T.fill, the legacy epoch start; the fill that follows would
# overwrite the partial.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        total = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        total[0] += x_frag[0]  # <- R204
        T.fill(total, 0.0)
        for j in T.Parallel(N):
            total[0] += x_frag[j]
        T.finalize_reducer(total)
        T.copy(total, out)
