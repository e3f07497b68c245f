# expect: ok
# input: q=[1.0, -448.0, 0.001953125, -0.0, 0.875, 240.0, 0.015625, 3.0]
# input: v=[60, 188, 123, 1, 128, 66, 4, 69]
# input: w=[56, -2, 1, -128, 119, 8, 0, 126]
# input: d=[1.0, -0.0, 0.1, 1e400]
# input: l=[4607182418800017408, -4616189618054758400, 1, 9218868437227405312]
# input: g=[4607182418800017408, 13830554455654793216, 0, 9223372036854775808]
# input: k=[-1, 5, -2147483648, 2147483647]
# expect: result q_bits=[56, 254, 1, 128, 54, 119, 8, 68]
# expect: result q_signed=[56, -2, 1, -128, 54, 119, 8, 68]
# expect: result v_e5m2=[1.0, -1.0, 57344.0, 1.52587890625e-05, -0.0, 3.0, 6.103515625e-05, 5.0]
# expect: result w_e4m3=[1.0, -448.0, 0.001953125, -0.0, 240.0, 0.015625, 0.0, 448.0]
# expect: result d_bits=[4607182418800017408, 9223372036854775808, 4591870180066957722, 9218868437227405312]
# expect: result d_signed=[4607182418800017408, -9223372036854775808, 4591870180066957722, 9218868437227405312]
# expect: result l_double=[1.0, -1.0, 5e-324, 1e400]
# expect: result g_double=[1.0, -1.0, 0.0, -0.0]
# expect: result k_unsigned=[4294967295, 5, 2147483648, 2147483647]
#
# T.reinterpret at 8 and 64 bits, and between two integers (docs/semantics.md §8).
# float8 is stored in float32 here (spec/dtypes.py); its bits are ml_dtypes' encoding.
# By hand:
# - q_bits / q_signed, float8_e4m3fn (sign, 4 exponent bits of bias 7, 3 mantissa
#   bits) -> uint8 / int8: 1.0 = 0x38, -448 = -1.75 * 2**8 = 0xFE (254, -2 as int8), the
#   least subnormal 2**-9 = 0x01, -0.0 = 0x80 (128, -128), 0.875 = 1.75 * 2**-1 = 0x36,
#   240 = 1.875 * 2**7 = 0x77, 2**-6 = 0x08, 3.0 = 1.5 * 2 = 0x44.
# - v_e5m2, uint8 -> float8_e5m2 (5 exponent bits of bias 15, 2 mantissa bits): 0x3C =
#   1.0, 0xBC = -1.0, 0x7B = 1.75 * 2**15 = 57344 (the largest finite), 0x01 = 2**-16,
#   0x80 = -0.0, 0x42 = 1.5 * 2 = 3.0, 0x04 = 2**-14 (the least normal), 0x45 = 1.25 * 4.
# - w_e4m3, int8 -> float8_e4m3fn: 56 = 0x38 = 1.0, -2 = 0xFE = -448, 1 = 2**-9, -128 =
#   0x80 = -0.0, 119 = 0x77 = 240, 8 = 2**-6, 0 = +0.0, 126 = 0x7E = 448.
# - d_bits / d_signed, float64 -> uint64 / int64: 1.0 = 0x3FF0000000000000, -0.0 =
#   0x8000000000000000 (2**63, -2**63 as int64), 0.1 = 0x3FB999999999999A, +inf =
#   0x7FF0000000000000.
# - l_double, int64 -> float64: 0x3FF0... = 1.0, 0xBFF0... = -1.0 (-4616189618054758400
#   as int64), 1 = 2**-1074 (5e-324), 0x7FF0... = +inf; g_double, uint64 -> float64:
#   0xBFF0... = 13830554455654793216 = -1.0, 2**63 = -0.0.
# - k_unsigned, int32 -> uint32: the same bits, so -1 is 2**32 - 1 and -2**31 is 2**31.
import tilelang.language as T

N = 8
M = 4


@T.prim_func
def main(
    q: T.Tensor((N,), T.float8_e4m3fn),
    v: T.Tensor((N,), T.uint8),
    w: T.Tensor((N,), T.int8),
    d: T.Tensor((M,), T.float64),
    l: T.Tensor((M,), T.int64),
    g: T.Tensor((M,), T.uint64),
    k: T.Tensor((M,), T.int32),
    q_bits: T.Tensor((N,), T.uint8),
    q_signed: T.Tensor((N,), T.int8),
    v_e5m2: T.Tensor((N,), T.float8_e5m2),
    w_e4m3: T.Tensor((N,), T.float8_e4m3fn),
    d_bits: T.Tensor((M,), T.uint64),
    d_signed: T.Tensor((M,), T.int64),
    l_double: T.Tensor((M,), T.float64),
    g_double: T.Tensor((M,), T.float64),
    k_unsigned: T.Tensor((M,), T.uint32),
):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            q_bits[j] = T.reinterpret(q[j], T.uint8)
            q_signed[j] = T.reinterpret(q[j], T.int8)
            v_e5m2[j] = T.reinterpret(v[j], T.float8_e5m2)
            w_e4m3[j] = T.reinterpret(w[j], "float8_e4m3fn")
        for j in T.Parallel(M):
            d_bits[j] = T.reinterpret(d[j], T.uint64)
            d_signed[j] = T.reinterpret(d[j], T.int64)
            l_double[j] = T.reinterpret(l[j], T.float64)
            g_double[j] = T.reinterpret(g[j], T.float64)
            k_unsigned[j] = T.reinterpret(k[j], T.uint32)
