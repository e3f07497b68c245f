# expect: ok
# input: x=[-1.0, 0.125, 0.25, 0.5, 0.75, 0.875, 2.0, 1e400]
# input: k=[-5, -2, -1, 0, 1, 3, 4, 100]
# expect: result y=[0.25, 0.25, 0.25, 0.5, 0.75, 0.75, 0.75, 0.75]
# expect: result swapped=[0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25]
# expect: result ki=[-2, -2, -1, 0, 1, 3, 3, 3]
# expect: result shifted=[-1.0, -1.0, 0.125, 0.25, 0.5, 0.75, 0.875, 2.0]
#
# T.clamp(x, lo, hi) is TileLang's T.min(T.max(x, lo), hi) (language/customize.py):
# keyword arguments as upstream writes them; with lo > hi the upper bound wins (every
# element is 0.25, not 0.75); on integers it is exact. In an index, the verifier proves
# x[T.clamp(j - 1, 0, N - 1)] in bounds for every j (Z3 reads the max/min).
import tilelang.language as T

N = 8


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    k: T.Tensor((N,), T.int32),
    y: T.Tensor((N,), T.float32),
    swapped: T.Tensor((N,), T.float32),
    ki: T.Tensor((N,), T.int32),
    shifted: T.Tensor((N,), T.float32),
):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            y[j] = T.clamp(x[j], min_val=0.25, max_val=0.75)
            swapped[j] = T.clamp(x[j], 0.75, 0.25)
            ki[j] = T.clamp(k[j], -2, 3)
            shifted[j] = x[T.clamp(j - 1, 0, N - 1)]
