# expect: inconclusive
# input: x=[1.0, 1e400, 2.0, -1e400, 0.5, 4.0, 8.0, 16.0]
#
# A NaN's bits are not modelled: its sign and payload depend on the operation that
# made it (CUDA's inf - inf is 0x7FFFFFFF, x86's 0xFFC00000). `x - x` is NaN where x is
# infinite, so those two elements of `T.reinterpret(x - x, "uint32")` are not judged and
# the verdict is inconclusive (exit 5); the others are exactly 0.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.uint32)):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            y[j] = T.reinterpret(x[j] - x[j], "uint32")
