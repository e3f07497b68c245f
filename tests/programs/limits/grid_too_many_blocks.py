# expect: error R102 at 12:5
#
# A legal launch (gridDim.x up to 2**31 - 1) with more blocks than the interpreter and
# the simulator run one by one (2**14, docs/limits.md): every block scatters into x at
# the positions it reads from idx, so the blocks are not proved independent and check
# cannot sample them.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), idx: T.Tensor((8,), T.int32)):
    with T.Kernel(10**6, threads=32) as bx:
        for j in T.Parallel(8):
            x[idx[j]] = 1.0
