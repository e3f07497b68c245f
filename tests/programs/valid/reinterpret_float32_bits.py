# expect: ok
# input: x=[1.0, 0.75, 3.0, 0.00390625, 448.0, -2.5, 0.0, 5.877471754111438e-39]
# input: i=[1065353216, -1082130432, 2139095040, -8388608, 1069547520, 1, 0, -2147483648]
# expect: result bits=[1065353216, 1061158912, 1077936128, 998244352, 1138753536, 3223322624, 0, 4194304]
# expect: result lg=[0, 0, 2, -8, 9, 2, -127, -126]
# expect: result p2=[1.0, 1.0, 4.0, 0.00390625, 512.0, 4.0, 0.0, 1.1754943508222875e-38]
# expect: result f=[1.0, -1.0, 1e400, -1e400, 1.5, 1.401298464324817e-45, 0.0, -0.0]
# expect: result sign=[0, 0, 0, 0, 0, -1, 0, 0]
#
# T.reinterpret between float32 and 32-bit integers: the IEEE-754 bits (docs/semantics.md
# §8), with DeepSeek's act-quant helpers (tests/upstream/fp8_act_quant.py) written as
# TileLang's example writes them. By hand:
# - bits: 1.0 = 0x3F800000, 0.75 = 0x3F400000, 3.0 = 0x40400000, 2**-8 = 0x3B800000
#   (exponent 119), 448 = 1.75 * 2**8 = 0x43E00000, -2.5 = 0xC0200000, +0.0 = 0, and the
#   subnormal 2**-127 = 2**22 * 2**-149 = 0x00400000 (mantissa only).
# - lg = fast_log2_ceil: exponent - 127, plus 1 when the mantissa is not zero, computed in
#   uint32 (`bits >> 23 & 0xFF` is uint32, so `- 127` wraps) and cast to int32: 1.0 -> 0;
#   0.75 -> 126 - 127 + 1 = 0; 3.0 -> 1 + 1 = 2; 2**-8 -> -8; 448 -> 8 + 1 = 9; -2.5 ->
#   the sign bit is masked off: 1 + 1 = 2; +0.0 -> 0 - 127 = 4294967169 as uint32, -127
#   as int32; the subnormal -> -127 + 1 = -126.
# - p2 = fast_pow2(lg): the bits (lg + 127) << 23 as float32: 2**lg for lg >= -126
#   (2**-126 = 1.1754943508222875e-38, the least normal), and lg = -127 gives the bits 0:
#   +0.0.
# - f: int32 bits as float32: 0x3F800000 = 1.0, 0xBF800000 = -1.0, 0x7F800000 = +inf,
#   0xFF800000 = -inf, 0x3FC00000 = 1.5, 1 = 2**-149 (the least subnormal), 0 = +0.0,
#   0x80000000 = -0.0.
# - sign: the float's bits as int32, shifted right by 31 (arithmetic): -1 for -2.5 only
#   (+0.0 has the sign bit clear).
import tilelang.language as T

N = 8


def fast_log2_ceil(x):
    bits_x = T.reinterpret(x, "uint32")
    exp_x = (bits_x >> 23) & 0xFF
    man_bits = bits_x & ((1 << 23) - 1)
    return T.Cast("int32", exp_x - 127 + T.if_then_else(man_bits != 0, 1, 0))


def fast_pow2(x):
    bits_x = (x + 127) << 23
    return T.reinterpret(bits_x, "float32")


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    i: T.Tensor((N,), T.int32),
    bits: T.Tensor((N,), T.uint32),
    lg: T.Tensor((N,), T.int32),
    p2: T.Tensor((N,), T.float32),
    f: T.Tensor((N,), T.float32),
    sign: T.Tensor((N,), T.int32),
):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            bits[j] = T.reinterpret(x[j], T.uint32)
            lg[j] = fast_log2_ceil(x[j])
            p2[j] = fast_pow2(fast_log2_ceil(x[j]))
            f[j] = T.reinterpret(i[j], "float32")
            sign[j] = T.reinterpret(x[j], "int32") >> 31
