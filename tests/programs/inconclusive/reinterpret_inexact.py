# expect: inconclusive
# input: x=[0.0, 1.0, -1.0, 0.5, 2.0, -0.25, 3.0, 0.125]
#
# The bits of a value known only within a bound say nothing exact. T.exp is not
# correctly rounded (CUDA's expf may differ from numpy's by a few ulps: the interpreter
# carries that allowance as the value's bound, docs/semantics.md §9), so
# `T.reinterpret(T.exp(x), "uint32")` could be any of several integers on the GPU: the
# elements are not judged and the verdict is inconclusive (exit 5), never verified.
# (exp(0) is exactly 1 everywhere, but the bound is the operation's, not the value's.)
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.uint32)):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            y[j] = T.reinterpret(T.exp(x[j]), "uint32")
