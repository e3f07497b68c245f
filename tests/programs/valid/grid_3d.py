# expect: ok
# input: x=arange(0, 64)
# expect: result out=[[[28.0, 92.0], [156.0, 220.0]], [[284.0, 348.0], [412.0, 476.0]]]
#
# A 3-D grid of 2 x 2 x 2 blocks with a tuple target; each block sums 8 values of x
# selected by all three block indices.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((2, 2, 2, N), T.float32), out: T.Tensor((2, 2, 2), T.float32)):
    with T.Kernel(2, 2, 2, threads=32) as (bx, by, bz):
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for k in T.Parallel(N):
            T.reducer_update(acc[0], x[bz, by, bx, k])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        out[bz, by, bx] = result[0]
