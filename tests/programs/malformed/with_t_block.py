# expect: error R101 at 8:14
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        with T.block("root"):
            x[0] = 1.0
