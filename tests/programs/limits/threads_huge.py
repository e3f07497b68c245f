# expect: error R506 at 8:30
#
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=10**6) as bx:
        for j in T.Parallel(8):
            x[j] = 1.0
