# expect: error R102 at 17:5
#
# A serial loop whose trip count is read from the block index, as a causal attention's
# `T.min(T.ceildiv(seq_len, block_N), T.ceildiv((bx + 1) * block_M, block_N))` is, was
# counted as one trip before the run, and the run held it to the limit in each block
# alone: 512 blocks of up to 64 trips each passed, and the run executed the body
# 64·65/2 + 448·64 = 30 752 times (past 2**14; the causal attention at seq_len 4096 ran
# 66 560 bodies of two T.gemm each, 69 minutes of `emit`). Every block writes x at a
# position it reads from idx, so the blocks are not proved independent and check runs
# all of them; the bound is evaluated per block before the first one runs
# (spec/run_cost.py, docs/limits.md).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), idx: T.Tensor((1,), T.int32)):
    with T.Kernel(512, threads=32) as bx:
        for k in T.serial(T.min(64, bx + 1)):
            x[idx[0]] = x[k % 8]
