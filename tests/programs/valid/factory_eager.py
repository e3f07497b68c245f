# expect: ok
# params: M=64, N=32, blk_m=16
# for-all: M in 16..65536
# assume: M % 16 == 0
#
# TileLang's eager @tilelang.jit style: the function's own body is the kernel. A is a
# tensor parameter annotated in the body, M and N are sizes (`T.const`, matched against
# A when TileLang calls it; bound here by the `# params:` line, and M quantified by the
# for-all), B is an output (`T.empty`, a parameter after the inputs) the function returns.
import tilelang
import tilelang.language as T


@tilelang.jit
def row_sum(A, blk_m, dtype: T.dtype = T.float32):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), dtype)
    B = T.empty((M,), dtype)
    assert blk_m % 8 == 0

    with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
        a = T.alloc_fragment((blk_m, N), dtype)
        b = T.alloc_fragment((blk_m,), dtype)
        T.copy(A[bx * blk_m, 0], a)
        T.reduce_sum(a, b, dim=1)
        T.copy(b, B[bx * blk_m])

    return B
