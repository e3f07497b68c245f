# expect: ok
# input: x=arange(0, 128)
# expect: result out=[496.0, 1520.0, 2544.0, 3568.0]
#
# Four blocks, each summing its own row of a global tensor: the block index bx offsets
# the global loads inside the update, and a scalar store outside any T.Parallel writes
# the block's result once.
import tilelang.language as T

BLOCKS = 4
N = 32


@T.prim_func
def main(x: T.Tensor((BLOCKS, N), T.float32), out: T.Tensor((BLOCKS,), T.float32)):
    with T.Kernel(BLOCKS, threads=64) as bx:
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x[bx, j])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        out[bx] = result[0]
