# expect: error R102 at 14
# expect: error R102 at 16
# expect: error R102 at 19
#
# The float8 formats CUDA has no type for (AMD's fnuz formats) and the exponent-only
# float8_e8m0fnu are refused by name (docs/limits.md), whether written as T.<dtype>, as a
# string or as a conversion; float8_e4m3fn and float8_e5m2 are supported.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float8_e4m3fnuz), y: T.Tensor((N,), T.float32)):  # <- R102
    with T.Kernel(1, threads=32) as bx:
        f = T.alloc_fragment((N,), "float8_e5m2fnuz")  # <- R102
        T.copy(x, f)
        for j in T.Parallel(N):
            y[j] = T.float8_e8m0fnu(f[j]) + 1.0  # <- R102
