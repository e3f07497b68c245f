# expect: error R100 at 8:9
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        try:
            x[0] = 1.0
        except Exception:
            pass
