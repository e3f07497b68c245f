# expect: error R100 at 12
#
# A helper called with kernel values is read as one expression: its assignments and its
# `return`. A loop in it has no such meaning: refused by name, at the loop.
import tilelang.language as T

R = 16


def total(x):
    acc = x
    for _ in range(2):  # <- R100
        acc = acc + x
    return acc


@T.prim_func
def kernel(A: T.Tensor((R,), T.float32), B: T.Tensor((R,), T.float32)):
    with T.Kernel(1, threads=32):
        for i in T.Parallel(R):
            B[i] = total(A[i])
