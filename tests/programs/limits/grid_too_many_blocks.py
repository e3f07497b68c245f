# expect: error R102 at 10:10
#
# A legal launch (gridDim.x up to 2**31 - 1) with more blocks than the interpreter and
# the simulator run one by one (2**14, docs/limits.md).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(10**6, threads=32) as bx:
        for j in T.Parallel(8):
            x[j] = 1.0
