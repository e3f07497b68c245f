# expect: error R102 at 12:5
#
# The grid and the serial loop are each within the limits, not their product: every
# block writes x at a position it reads from idx, so the blocks are not proved
# independent and check must run all of them, and the body would run 2**10 × 2**11 =
# 2**21 times (at most 2**20, docs/limits.md).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), idx: T.Tensor((1,), T.int32)):
    with T.Kernel(2**10, threads=32) as bx:
        for k in T.serial(2**11):
            x[idx[0]] = 1.0
