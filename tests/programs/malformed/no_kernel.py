# expect: error R100 at 7:5
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    x[0] = 1.0
