# expect: ok
# input: x=[-2.75, -0.5, 0.0, 1.5, 2.75, 65519.99, 70000.0, 3.0]
# expect: result inf16=[1e400, -1e400, 1e400, -1e400, 1e400, -1e400, 1e400, -1e400]
# expect: result infbf=[1e400, -1e400, 1e400, -1e400, 1e400, -1e400, 1e400, -1e400]
# expect: result inf32=[1e400, -1e400, 1e400, -1e400, 1e400, -1e400, 1e400, -1e400]
# expect: result inf64=[1e400, -1e400, 1e400, -1e400, 1e400, -1e400, 1e400, -1e400]
# expect: result h=[-2.75, -0.5, 0.0, 1.5, 2.75, 65504.0, 1e400, 3.0]
# expect: result n=[-2, 0, 0, 1, 2, 65519, 70000, 3]
# expect: result m=[-2.75, -0.5, 0.0, 1.5, 2.75, 65519.99, 70000.0, 3.0]
#
# T.infinity(dtype) and -T.infinity(dtype) in every float dtype (TileLang refuses it for
# integer dtypes: tests/programs/invalid/builtin_infinity_int.py), and x.astype(dtype),
# which is T.cast(x, dtype): to float16 it rounds to nearest (65519.99 -> 65504,
# 70000 -> inf), to int32 it truncates toward zero. T.max with -inf keeps x.
import tilelang.language as T

N = 8


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    inf16: T.Tensor((N,), T.float16),
    infbf: T.Tensor((N,), T.bfloat16),
    inf32: T.Tensor((N,), T.float32),
    inf64: T.Tensor((N,), T.float64),
    h: T.Tensor((N,), T.float16),
    n: T.Tensor((N,), T.int32),
    m: T.Tensor((N,), T.float32),
):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            if j % 2 == 0:
                inf16[j] = T.infinity(T.float16)
                infbf[j] = T.infinity("bfloat16")
                inf32[j] = T.infinity(T.float32)
                inf64[j] = T.infinity(T.float64)
            else:
                inf16[j] = -T.infinity(T.float16)
                infbf[j] = -T.infinity("bfloat16")
                inf32[j] = -T.infinity(T.float32)
                inf64[j] = -T.infinity(T.float64)
            h[j] = x[j].astype(T.float16)
            n[j] = x[j].astype("int32")
            m[j] = T.max(x[j], -T.infinity(T.float32))
