# expect: error R506 at 9:30
#
# 2048 threads per block cannot be launched on sm_90 (at most 1024).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=2048) as bx:
        for j in T.Parallel(8):
            x[j] = 1.0
