# expect: ok
# input: x=arange(0, 96)
# expect: result out=[[120.0, 376.0], [632.0, 888.0], [1144.0, 1400.0]]
#
# A 2-D grid (2 x 3 blocks, tuple target): each block (bx, by) sums the 16 values of
# x[by, bx, :] and stores them at out[by, bx].
import tilelang.language as T

GX = 2
GY = 3
N = 16


@T.prim_func
def main(x: T.Tensor((GY, GX, N), T.float32), out: T.Tensor((GY, GX), T.float32)):
    with T.Kernel(GX, GY, threads=64) as (bx, by):
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for k in T.Parallel(N):
            T.reducer_update(acc[0], x[by, bx, k])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        out[by, bx] = result[0]
