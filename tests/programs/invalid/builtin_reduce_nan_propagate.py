# expect: error R101 at 19
#
# nan_propagate=True into a float16 (or bfloat16) destination selects TileLang's
# NaN-propagating max (MaxOpNan, __hmax_nan): a NaN term makes the result NaN. That
# reduction is not modelled; the default (nan_propagate=False) ignores NaN terms, as
# T.max does. Into float32 the flag changes nothing (fmaxf) and is accepted.
import tilelang.language as T

M = 4
N = 8


@T.prim_func
def main(x: T.Tensor((M, N), T.float16), y: T.Tensor((M,), T.float16)):
    with T.Kernel(1, threads=32) as bx:
        f = T.alloc_fragment((M, N), T.float16)
        T.copy(x, f)
        r = T.alloc_fragment((M,), T.float16)
        T.reduce_max(f, r, dim=1, nan_propagate=True)  # <- R101
        T.copy(r, y)
