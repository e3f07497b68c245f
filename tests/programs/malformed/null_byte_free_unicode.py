# expect: error R101 at 9:20
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        for j in T.Parallel(8):
            x[j] = größe
