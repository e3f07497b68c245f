# expect: ok
# input: i=[1, -1, 257, 1077936129, -1077936129, 65519, 65520, 2147483647]
# input: d=[1.0039062500009095, 1.0004882812500009, -1.0039062500009095, 65519.99, 3.5e+38, 1e-50, 1.3775324423698682e-40, 1e+300]
# expect: result i_bf16=[1.0, -1.0, 256.0, 1073741824.0, -1073741824.0, 65280.0, 65280.0, 2147483648.0]
# expect: result i_f16=[1.0, -1.0, 257.0, 1e400, -1e400, 65504.0, 1e400, 1e400]
# expect: result d_bf16=[1.0, 1.0, -1.0, 65536.0, 1e400, 0.0, 1.8367099231598242e-40, 1e400]
# expect: result d_f16=[1.00390625, 1.0, -1.00390625, 65504.0, 1e400, 0.0, 0.0, 1e400]
#
# Conversions into bfloat16 and float16 from int32 and float64 go through float32, as
# TileLang's bfloat16_t(x) / half_t(x) do on the H200: 1 + 2**-8 + 2**-40 rounds to
# float32's 1 + 2**-8, a tie that goes to even (1.0). An int32 into bfloat16 then keeps
# float32's upper 16 bits (cutlass's bfloat16_t(int), toward zero): 65519 is 65280, not
# 65536 (docs/semantics.md §8). Outputs are float32 views of the 16-bit results.
import tilelang.language as T

N = 8


@T.prim_func
def main(
    i: T.Tensor((N,), T.int32),
    d: T.Tensor((N,), T.float64),
    i_bf16: T.Tensor((N,), T.float32),
    i_f16: T.Tensor((N,), T.float32),
    d_bf16: T.Tensor((N,), T.float32),
    d_f16: T.Tensor((N,), T.float32),
):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            i_bf16[j] = T.cast(T.cast(i[j], T.bfloat16), T.float32)
            i_f16[j] = T.cast(T.cast(i[j], T.float16), T.float32)
            d_bf16[j] = T.cast(T.cast(d[j], T.bfloat16), T.float32)
            d_f16[j] = T.cast(T.cast(d[j], T.float16), T.float32)
