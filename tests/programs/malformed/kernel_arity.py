# expect: error R102 at 7:41
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(2, 2, threads=128) as bx:
        x[0] = 1.0
