# expect: error R506 at 8:22
#
# gridDim.y (and z) is at most 65535 on sm_90.
import tilelang.language as T

@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(1, 65536, threads=32) as (bx, by):
        for j in T.Parallel(8):
            x[j] = 1.0
