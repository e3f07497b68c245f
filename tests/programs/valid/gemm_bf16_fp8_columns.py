# expect: ok
#
# bfloat16 and float8_e4m3fn operands into float32, then a column sum (T.reduce_sum over
# dim 0) of each result: the reduction crosses the warps that split C's rows.
import tilelang.language as T


@T.prim_func
def main(a: T.Tensor((64, 32), T.bfloat16), b: T.Tensor((32, 16), T.bfloat16),
         x: T.Tensor((64, 32), T.float8_e4m3fn), y: T.Tensor((16, 32), T.float8_e4m3fn),
         col_bf16: T.Tensor((16,), T.float32), col_fp8: T.Tensor((16,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        a_s = T.alloc_shared((64, 32), T.bfloat16)
        b_s = T.alloc_shared((32, 16), T.bfloat16)
        x_s = T.alloc_shared((64, 32), T.float8_e4m3fn)
        y_s = T.alloc_shared((16, 32), T.float8_e4m3fn)
        acc = T.alloc_fragment((64, 16), T.float32)
        acc8 = T.alloc_fragment((64, 16), T.float32)
        cs = T.alloc_fragment((16,), T.float32)
        cs8 = T.alloc_fragment((16,), T.float32)
        T.copy(a, a_s)
        T.copy(b, b_s)
        T.copy(x, x_s)
        T.copy(y, y_s)
        T.gemm(a_s, b_s, acc, clear_accum=True)
        T.gemm(x_s, y_s, acc8, transpose_B=True, clear_accum=True)
        T.reduce_sum(acc, cs, dim=0)
        T.reduce_sum(acc8, cs8, dim=0)
        T.copy(cs, col_bf16)
        T.copy(cs8, col_fp8)
