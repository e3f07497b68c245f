# expect: ok
#
# A grid of 2**20 blocks over a tensor of 2**26 elements: the blocks write disjoint
# tiles, so check proves them independent and runs a sample (the block classes and two
# seeded blocks against their own windows); the number of blocks in the grid is no limit.
import tilelang.language as T

N = 2**26
BLOCK = 64


@T.prim_func
def main(x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.float32)):
    with T.Kernel(N // BLOCK, threads=64) as bx:
        for j in T.Parallel(BLOCK):
            y[bx * BLOCK + j] = x[bx * BLOCK + j] * 2.0
