# expect: error R102 at 18:13
#
# Found by the robustness corpus (examples/online_softmax_stats.py with a constant
# turned into 2**31): a grid of 2**28 blocks made the block classification allocate an
# array per block (2 GiB, MemoryError, exit 4). A grid dimension past 2**20 blocks is now
# classified from both ends, an evenly spaced sample and the bisected first block of each
# change (stated in the report); here that finds the tail block, whose index runs past y.
import tilelang.language as T

N = 2**31 - 1
BLOCK = 64


@T.prim_func
def main(x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.float32)):
    with T.Kernel(T.ceildiv(N, BLOCK), threads=64) as bx:
        for j in T.Parallel(BLOCK):
            y[bx * BLOCK + j] = x[bx * BLOCK + j] + 1.0
