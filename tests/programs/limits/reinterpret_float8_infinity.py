# expect: error R102 at 17
# input: v=[60, 124, 188, 0, 1, 2, 3, 4]
#
# The uint8 0x7C read as float8_e5m2 is +inf. float8 values are modelled without
# infinities (docs/semantics.md §8: every conversion into float8 saturates, so the static
# checks rely on |x| <= 57344), so the interpreter refuses the reinterpretation that makes
# one, naming its bits, rather than carry a value outside the model.
import tilelang.language as T

N = 8


@T.prim_func
def main(v: T.Tensor((N,), T.uint8), y: T.Tensor((N,), T.float8_e5m2)):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            y[j] = T.reinterpret(v[j], T.float8_e5m2)  # <- R102
