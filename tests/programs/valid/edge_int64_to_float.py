# expect: ok
# input: s=[0, -1, 16777217, 9007199254740993, 4629700416936869889, 9223372036854775807, -9223372036854775808, -9223371487098961919]
# input: u=[9223372036854775808, 9223372586610589697, 18446744073709551615, 18446743523953737727, 18446743523953737728, 4294967295, 1, 9007199254740993]
# expect: result s_f32=[0.0, -1.0, 16777216.0, 9007199254740992.0, 4.62970041693687e+18, 9.223372036854776e+18, -9.223372036854776e+18, -9.223371487098962e+18]
# expect: result s_f64=[0.0, -1.0, 16777217.0, 9007199254740992.0, 4.62970041693687e+18, 9.223372036854776e+18, -9.223372036854776e+18, -9.223371487098962e+18]
# expect: result u_f32=[9.223372036854776e+18, 9.223373136366404e+18, 1.8446744073709552e+19, 1.8446742974197924e+19, 1.8446744073709552e+19, 4294967296.0, 1.0, 9007199254740992.0]
# expect: result u_f64=[9.223372036854776e+18, 9.22337258661059e+18, 1.8446744073709552e+19, 1.8446743523953738e+19, 1.8446743523953738e+19, 4294967295.0, 1.0, 9007199254740992.0]
#
# int64 and uint64 values converted to float32 and float64: one rounding to nearest
# even from the exact integer (cvt.rn), also past 2**53 and 2**63 (docs/semantics.md §8).
import tilelang.language as T

N = 8


@T.prim_func
def main(
    s: T.Tensor((N,), T.int64),
    u: T.Tensor((N,), T.uint64),
    s_f32: T.Tensor((N,), T.float32),
    s_f64: T.Tensor((N,), T.float64),
    u_f32: T.Tensor((N,), T.float32),
    u_f64: T.Tensor((N,), T.float64),
):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            s_f32[j] = T.cast(s[j], T.float32)
            s_f64[j] = T.cast(s[j], T.float64)
            u_f32[j] = T.cast(u[j], T.float32)
            u_f64[j] = T.cast(u[j], T.float64)
