# expect: error R102 at 14
#
# T.clamp takes the value, the lower and the upper bound (TileLang's clamp(dst,
# min_val, max_val)); the upper bound is missing.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            y[j] = T.clamp(x[j], min_val=0.25)  # <- R102
