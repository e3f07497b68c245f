# expect: ok
# input: x=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
# input: sizes=[3, 5]
# expect: result y=[3, 4, 5, 6, 8, 9, 0, 0]
#
# A T.copy whose region starts at a T.alloc_var (group_per_split_token_cast_fp8's row
# offset): block b sums sizes[0..b] into its own `off` and copies x[off : off + 4].
# Block 0 reads x[3:7]; block 1 reads x[8:12], past x's end, where a copy reads 0.
# Our CUDA declares the start as a C local and tests it on both sides of x's border.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((10,), T.float32), sizes: T.Tensor((2,), T.int32),
         y: T.Tensor((8,), T.float32)):
    with T.Kernel(2, threads=32) as bx:
        off = T.alloc_var(T.int32)
        off = 0
        for i in T.serial(bx + 1):
            off += sizes[i]
        tile = T.alloc_fragment((4,), T.float32)
        T.copy(x[off:off + 4], tile)
        T.copy(tile, y[bx * 4:bx * 4 + 4])
