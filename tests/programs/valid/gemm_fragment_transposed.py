# expect: ok
#
# T.gemm with both operands in fragments and both transposed: A stored K×M
# (transpose_A) and B stored N×K (transpose_B). Each is laid out by its logical element
# (codegen/lower/gemm.py: A[i, k] where the mma's A operand wants it, whichever way the
# buffer stores it), so the lanes' warp shuffles read the same registers as for
# untransposed fragments.
import tilelang.language as T


@T.prim_func
def main(a: T.Tensor((32, 64), T.float16), b: T.Tensor((64, 32), T.float16),
         c: T.Tensor((64, 64), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        a_f = T.alloc_fragment((32, 64), T.float16)
        b_f = T.alloc_fragment((64, 32), T.float16)
        acc = T.alloc_fragment((64, 64), T.float32)
        T.copy(a, a_f)
        T.copy(b, b_f)
        T.gemm(a_f, b_f, acc, transpose_A=True, transpose_B=True, clear_accum=True)
        T.copy(acc, c)
