# expect: error R200 at 20
#
# Legacy surface: the in-place reducer is read (to normalize x) before
# T.finalize_reducer has combined the partials; only after it is the buffer readable.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        total = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.fill(total, 0.0)
        for j in T.Parallel(N):
            total[0] += x_frag[j]
        for j in T.Parallel(N):
            y[j] = x_frag[j] / total[0]  # <- R200
        T.finalize_reducer(total)
