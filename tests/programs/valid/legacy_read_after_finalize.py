# expect: ok
# input: x=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
# expect: result y=[1.0, 4.0, 9.0, 16.0, 25.0, 36.0, 49.0, 64.0, 81.0, 100.0, 121.0, 144.0, 169.0, 196.0, 225.0, 256.0]
# expect: result ss=[1496.0]
#
# After a legacy in-place finalize the reducer is an ordinary readable fragment: an
# RMSNorm-style kernel reads it in the next T.Parallel loop (here y = x * x * ss / ss).
import tilelang.language as T

N = 16


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    y: T.Tensor((N,), T.float32),
    ss: T.Tensor((1,), T.float32),
):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        sum_sq = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.clear(sum_sq)
        for i in T.Parallel(N):
            sum_sq[0] += x_frag[i] * x_frag[i]
        T.finalize_reducer(sum_sq)
        for i in T.Parallel(N):
            y[i] = x_frag[i] * x_frag[i] * sum_sq[0] / sum_sq[0]
        ss[0] = sum_sq[0]
