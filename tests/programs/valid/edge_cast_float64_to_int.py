# expect: ok
# input: x=[0.5, -1.5, 300.0, -129.0, 65535.5, 2147483648.0, 3000000000.0, -3000000000.0, 9.223372036854776e+18, 1e+19, -1e+19, 1.5e+19, 1.844674407370956e+19, 1e+300, -1e400, 1e400]
# input: w=[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1e400]
# expect: result o_int8=[0, -1, 44, 127, -1, -1, -1, 0, -1, -1, 0, -1, -1, -1, 0, 0]
# expect: result o_int16=[0, -1, 300, -129, -1, -1, -1, 0, -1, -1, 0, -1, -1, -1, 0, 0]
# expect: result o_int32=[0, -1, 300, -129, 65535, 2147483647, 2147483647, -2147483648, 2147483647, 2147483647, -2147483648, 2147483647, 2147483647, 2147483647, -2147483648, -2147483648]
# expect: result o_int64=[0, -1, 300, -129, 65535, 2147483648, 3000000000, -3000000000, 9223372036854775807, 9223372036854775807, -9223372036854775808, 9223372036854775807, 9223372036854775807, 9223372036854775807, -9223372036854775808, -9223372036854775808]
# expect: result o_uint8=[0, 0, 44, 0, 255, 0, 0, 0, 255, 255, 0, 255, 255, 255, 0, 0]
# expect: result o_uint16=[0, 0, 300, 0, 65535, 0, 24064, 0, 65535, 65535, 0, 65535, 65535, 65535, 0, 0]
# expect: result o_uint32=[0, 0, 300, 0, 65535, 2147483648, 3000000000, 0, 4294967295, 4294967295, 0, 4294967295, 4294967295, 4294967295, 0, 2147483648]
# expect: result o_uint64=[0, 0, 300, 0, 65535, 2147483648, 3000000000, 0, 9223372036854775808, 10000000000000000000, 0, 15000000000000000000, 18446744073709551615, 18446744073709551615, 0, 9223372036854775808]
#
# float64 values at every magnitude converted to every integer dtype, as the H200 converts TileLang's C casts
# (docs/semantics.md §8): truncate, saturate (to the 32-bit range of the same signedness
# for 8/16-bit targets, the 64-bit range for 64-bit ones), keep the low bits; NaN is 0
# into 32 bits and narrower from 16/32-bit floats (from float64: 100…0 into int32/uint32), 100…0 into 64 bits. Results computed by
# tests/test_edge_semantics.py's ground truth (Python integers), never by the tool.
import tilelang.language as T

N = 16


@T.prim_func
def main(
    x: T.Tensor((N,), T.float64),
    w: T.Tensor((N,), T.float64),
    o_int8: T.Tensor((N,), T.int8),
    o_int16: T.Tensor((N,), T.int16),
    o_int32: T.Tensor((N,), T.int32),
    o_int64: T.Tensor((N,), T.int64),
    o_uint8: T.Tensor((N,), T.uint8),
    o_uint16: T.Tensor((N,), T.uint16),
    o_uint32: T.Tensor((N,), T.uint32),
    o_uint64: T.Tensor((N,), T.uint64),
):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            # w is inf where x is: inf - inf makes the NaN lanes (a literal list has no
            # NaN, and TVM folds x - x to 0); elsewhere x - 0 is x
            v = x[j] - w[j]
            o_int8[j] = T.cast(v, T.int8)
            o_int16[j] = T.cast(v, T.int16)
            o_int32[j] = T.cast(v, T.int32)
            o_int64[j] = T.cast(v, T.int64)
            o_uint8[j] = T.cast(v, T.uint8)
            o_uint16[j] = T.cast(v, T.uint16)
            o_uint32[j] = T.cast(v, T.uint32)
            o_uint64[j] = T.cast(v, T.uint64)
