# expect: ok
#
# T.use_swizzle: a 7 x 23 grid launched in panels of 3 rows (TileLang's
# rasterization2DRow<3>, codegen.plan_raster). Y depends on each block's indices, so a
# block index taken twice or never leaves elements of Y wrong or unwritten.
import tilelang.language as T


@T.prim_func
def main(X: T.Tensor((56, 92), T.float32), Y: T.Tensor((56, 92), T.float32)):
    with T.Kernel(7, 23, threads=32) as (bx, by):
        T.use_swizzle(3)
        for i, j in T.Parallel(8, 4):
            Y[bx * 8 + i, by * 4 + j] = X[bx * 8 + i, by * 4 + j] * 2.0 + bx * 100 + by
