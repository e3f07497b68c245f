# expect: error R100 at 10:13
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        s = 0.0
        for k in T.serial(8):
            s += x[k]
