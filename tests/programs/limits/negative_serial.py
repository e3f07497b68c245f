# expect: error R102 at 11:18
# expect: error R102 at 13:18
#
# A serial loop whose bounds run backwards is a mistake, like T.Parallel(-8).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        for i in T.serial(-8):
            x[0] = 1.0
        for i in T.serial(4, 2):
            x[0] = 1.0
        for i in T.serial(4, 2, -1):
            x[i] = 1.0
