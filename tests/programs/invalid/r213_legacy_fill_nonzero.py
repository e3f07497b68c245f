# expect: error R213 at 17
#
# Legacy T.fill of a sum reducer with 1.0: the fill writes every per-thread partial, so
# the result gained 1.0 once per participating thread (128 here), not once. Use
# T.reducer_init(acc, 1.0) for a seed.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.fill(acc, 1.0)  # <- R213
        for j in T.Parallel(N):
            acc[0] += x_frag[j]
        T.finalize_reducer(acc)
        T.copy(acc, out)
