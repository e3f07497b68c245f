# expect: ok
#
# Issue 24: a grid of 2**31 - 1 blocks (the largest gridDim.x) made layout inference
# build the block index's values, a 16 GiB arange (exit 4 under a 4 GB limit). A block
# index is now a range that costs nothing until a rule enumerates it; the blocks write
# disjoint elements, so check samples them.
import tilelang.language as T

N = 2**31 - 1


@T.prim_func
def main(x: T.Tensor((N, 8), T.float32), y: T.Tensor((N,), T.float32)):
    with T.Kernel(N, threads=32) as bx:
        x_frag = T.alloc_fragment((8,), T.float32)
        T.copy(x[bx, 0:8], x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(8):
            T.reducer_update(acc[0], x_frag[j])
        res = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, res)
        y[bx] = res[0]
