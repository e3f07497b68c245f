# expect: error R102 at 12:9
# input: n=[1073741824]
#
# A loop bound read at run time is checked when the interpreter reaches it: 2**30
# iterations are more than it runs (2**20, docs/limits.md), so R102, not a hang.
import tilelang.language as T


@T.prim_func
def main(n: T.Tensor((1,), T.int32), x: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        for i in T.serial(n[0]):
            x[0] = x[0] + 1.0
