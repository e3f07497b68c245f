# expect: error R102 at 5:12
import tilelang.language as T


def kernel(n, threads=128):
    @T.prim_func
    def main(x: T.Tensor((n,), T.float32)):
        with T.Kernel(1, threads=threads) as bx:
            x[0] = 1.0

    return main
