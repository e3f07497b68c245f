# expect: ok
# input: x=[0.5, -1.5, 128.0, -129.0, 255.5, 32768.0, 65504.0, -65504.0, 1e400, -1e400, 1e400]
# input: w=[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1e400]
# expect: result o_int8=[0, -1, -128, 127, -1, 0, -32, 32, -1, 0, 0]
# expect: result o_int16=[0, -1, 128, -129, 255, -32768, -32, 32, -1, 0, 0]
# expect: result o_int32=[0, -1, 128, -129, 255, 32768, 65504, -65504, 2147483647, -2147483648, 0]
# expect: result o_int64=[0, -1, 128, -129, 255, 32768, 65504, -65504, 9223372036854775807, -9223372036854775808, -9223372036854775808]
# expect: result o_uint8=[0, 0, 128, 0, 255, 0, 224, 0, 255, 0, 0]
# expect: result o_uint16=[0, 0, 128, 0, 255, 32768, 65504, 0, 65535, 0, 0]
# expect: result o_uint32=[0, 0, 128, 0, 255, 32768, 65504, 0, 4294967295, 0, 0]
# expect: result o_uint64=[0, 0, 128, 0, 255, 32768, 65504, 0, 18446744073709551615, 0, 9223372036854775808]
#
# float16 values (through float, as TileLang's half_t converts) converted to every integer dtype, as the H200 converts TileLang's C casts
# (docs/semantics.md §8): truncate, saturate (to the 32-bit range of the same signedness
# for 8/16-bit targets, the 64-bit range for 64-bit ones), keep the low bits; NaN is 0
# into 32 bits and narrower, 100…0 into 64 bits. Results computed by
# tests/test_edge_semantics.py's ground truth (Python integers), never by the tool.
import tilelang.language as T

N = 11


@T.prim_func
def main(
    x: T.Tensor((N,), T.float16),
    w: T.Tensor((N,), T.float16),
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
