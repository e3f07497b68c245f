# expect: ok
# params: M=96, N=32
# for-all: M in 16..65536
# assume: M % 16 == 0
#
# `T.dynamic` sizes: TileLang compiles one kernel for every M at run time; the verdict
# is for the sizes bound (`# params:` / --param) or quantified (`# for-all:`), exactly as
# for a `T.const` size. The optional index dtype (`"int32"`) is accepted. The helper
# `scaled` is called with kernel values: its assignments and its `return` are one
# expression, as the Python call builds it while TileLang traces the kernel.
import tilelang
import tilelang.language as T


def scaled(x, factor):
    """x * factor + 1, the way a user factors an expression out."""
    y = x * factor
    return y + T.cast(1.0, "float32")


@tilelang.jit
def row_sum(A, blk_m=16):
    M = T.dynamic("M", "int32")
    N = T.const("N")
    A: T.Tensor((M, N), T.float32)
    B = T.empty((M,), T.float32)

    with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
        a = T.alloc_fragment((blk_m, N), T.float32)
        b = T.alloc_fragment((blk_m,), T.float32)
        T.copy(A[bx * blk_m, 0], a)
        T.reduce_sum(a, b, dim=1)
        for i in T.Parallel(blk_m):
            B[bx * blk_m + i] = scaled(b[i], 2.0)

    return B
