# expect: error R506 at 9:19
#
# gridDim.x is at most 2**31 - 1 on sm_90.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(2**40, 4, threads=32) as (bx, by):
        for j in T.Parallel(8):
            x[j] = 1.0
