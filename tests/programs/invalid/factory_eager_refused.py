# expect: error R102 at 13:24
# expect: error R100 at 34:5
#
# What the eager style cannot be read as: a `T.dynamic` size whose index dtype is not an
# integer (a run-time size is bound like a `T.const` one: factory_eager_dynamic.py) and
# a `return` that is not the kernel's `T.empty` outputs.
import tilelang
import tilelang.language as T


@tilelang.jit
def dynamic_rows(A, N=32):
    M = T.dynamic("M", "float32")  # <- R102
    A: T.Tensor((M, N), T.float32)
    B = T.empty((M,), T.float32)

    with T.Kernel(1, threads=128):
        T.clear(B)

    return B


@tilelang.jit
def wrong_return(A, M=16, N=32):
    A: T.Tensor((M, N), T.float32)
    B = T.empty((M,), T.float32)
    with T.Kernel(1, threads=128):
        a = T.alloc_fragment((M, N), T.float32)
        b = T.alloc_fragment((M,), T.float32)
        T.copy(A, a)
        T.reduce_sum(a, b, dim=1)
        T.copy(b, B)

    return A  # <- R100
