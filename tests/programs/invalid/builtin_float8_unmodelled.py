# expect: error R102 at 14
# expect: error R102 at 16
# expect: error R102 at 19
#
# float8 dtypes are refused by name: their storage, rounding (ml_dtypes) and CUDA's
# __nv_fp8 conversions are not modelled (docs/limits.md), whether written as T.<dtype>,
# as a string or as a conversion.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float8_e4m3fn), y: T.Tensor((N,), T.float32)):  # <- R102
    with T.Kernel(1, threads=32) as bx:
        f = T.alloc_fragment((N,), "float8_e5m2")  # <- R102
        T.copy(x, f)
        for j in T.Parallel(N):
            y[j] = T.float8_e4m3fn(f[j]) + 1.0  # <- R102
