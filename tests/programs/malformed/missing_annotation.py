# expect: error R102 at 6:10
import tilelang.language as T


@T.prim_func
def main(x, out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        out[0] = 1.0
