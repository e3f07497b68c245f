# expect: ok
# input: b=[1.0, -2.0, 0.15625, 3.0, -0.0, 1e400, 9.183549615799121e-41, 3.3895313892515355e+38]
# input: u=[16256, 49152, 32640, 65408, 16457, 1, 32768, 17096]
# input: h=[1.0, -2.0, 65504.0, 5.960464477539063e-08, -0.0, 1e400, 0.5, 1.5]
# input: s=[15360, -16384, 31744, -1024, 1, 0, -32768, 31743]
# expect: result b_bits=[16256, 49152, 15904, 16448, 32768, 32640, 1, 32639]
# expect: result u_bf16=[1.0, -2.0, 1e400, -1e400, 3.140625, 9.183549615799121e-41, -0.0, 100.0]
# expect: result h_bits=[15360, -16384, 31743, 1, -32768, 31744, 14336, 15872]
# expect: result s_half=[1.0, -2.0, 1e400, -1e400, 5.960464477539063e-08, 0.0, -0.0, 65504.0]
# expect: result h_bf16=[0.0078125, -2.0, 2.648071397852762e+36, 9.183549615799121e-41, -0.0, 2.658455991569832e+36, 3.0517578125e-05, 0.125]
#
# T.reinterpret between the 16-bit dtypes (docs/semantics.md §8). bfloat16 is stored in
# float32 here (spec/dtypes.py); its bits are the float32's upper 16. By hand:
# - b_bits, bfloat16 -> uint16: 1.0 = 0x3F80, -2.0 = 0xC000, 0.15625 = 1.25 * 2**-3 =
#   exponent 124, mantissa 0x20: 0x3E20 = 15904, 3.0 = 0x4040, -0.0 = 0x8000, +inf =
#   0x7F80, the least subnormal 2**-133 = 0x0001, the largest finite 0x7F7F.
# - u_bf16, uint16 -> bfloat16: 0x3F80 = 1.0, 0xC000 = -2.0, 0x7F80 = +inf, 0xFF80 = -inf,
#   0x4049 = (1 + 73/128) * 2 = 3.140625, 0x0001 = 2**-133, 0x8000 = -0.0, 0x42C8 =
#   (1 + 72/128) * 2**6 = 100.0.
# - h_bits, float16 -> int16: 1.0 = 0x3C00 = 15360, -2.0 = 0xC000 = -16384 as int16,
#   65504 = 0x7BFF, the least subnormal 2**-24 = 0x0001, -0.0 = 0x8000 = -32768, +inf =
#   0x7C00, 0.5 = 0x3800, 1.5 = 0x3E00.
# - s_half, int16 -> float16: the same table read back; -1024 = 0xFC00 = -inf.
# - h_bf16, float16 -> bfloat16 (one width, two float formats: the bits as they are):
#   0x3C00 is exponent 120 in bfloat16, 2**-7; 0xC000 -2.0 in both; 0x7BFF is exponent
#   247, mantissa 127: (2 - 2**-7) * 2**120 = 2.648071397852762e36; 0x0001 = 2**-133;
#   0x8000 = -0.0; 0x7C00 = 2**121; 0x3800 = 2**-15; 0x3E00 = 2**-3.
import tilelang.language as T

N = 8


@T.prim_func
def main(
    b: T.Tensor((N,), T.bfloat16),
    u: T.Tensor((N,), T.uint16),
    h: T.Tensor((N,), T.float16),
    s: T.Tensor((N,), T.int16),
    b_bits: T.Tensor((N,), T.uint16),
    u_bf16: T.Tensor((N,), T.bfloat16),
    h_bits: T.Tensor((N,), T.int16),
    s_half: T.Tensor((N,), T.float16),
    h_bf16: T.Tensor((N,), T.bfloat16),
):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            b_bits[j] = T.reinterpret(b[j], T.uint16)
            u_bf16[j] = T.reinterpret(u[j], T.bfloat16)
            h_bits[j] = T.reinterpret(h[j], "int16")
            s_half[j] = T.reinterpret(s[j], "float16")
            h_bf16[j] = T.reinterpret(h[j], T.bfloat16)
