# expect: error R201 at 21
#
# Legacy surface: `+=` into the reducer after its in-place finalize. The buffer is readable
# now, but it is no longer accumulating; without a new T.clear/T.fill this is not an update
# of any open epoch.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        total = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.clear(total)
        for j in T.Parallel(N):
            total[0] += x_frag[j]
        T.finalize_reducer(total)
        total[0] += x_frag[0]  # <- R201
        T.copy(total, out)
