# expect: error R100 at 6:43
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), n: T.int32):
    with T.Kernel(1, threads=128) as bx:
        x[0] = 1.0
