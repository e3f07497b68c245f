# expect: error R102 at 15:13
# input: n=[256]
#
# Issue 24: each loop whose bounds are read at run time was held to the limit alone,
# so two nested ones could run their body 2**30 times. The interpreter counts the runs
# of each body in a block: 256 × 256 = 2**16, past 2**14 (docs/limits.md).
import tilelang.language as T


@T.prim_func
def main(n: T.Tensor((1,), T.int32), x: T.Tensor((8,), T.float32),
         y: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        for i in T.serial(n[0]):
            for k in T.serial(n[0]):
                y[0] = x[k % 8]
