# expect: ok
# input: a=[-0.0, 0.0, -0.0, 1e400, 2.0, -1.0]
# input: b=[0.0, -0.0, -0.0, 2.0, 1e400, -0.0]
# input: m=[0.0, 0.0, 0.0, 1e400, 0.0, 0.0]
# input: k=[0.0, 0.0, 0.0, 0.0, 1e400, 0.0]
# expect: result inv_max=[1e400, 1e400, -1e400, 0.5, 0.5, -1e400]
# expect: result inv_min=[-1e400, -1e400, -1e400, 0.5, 0.5, -1.0]
# expect: result inv_max16=[1e400, 1e400, -1e400, 0.5, 0.5, -1e400]
# expect: result inv_min16=[-1e400, -1e400, -1e400, 0.5, 0.5, -1.0]
#
# T.max / T.min of signed zeros and NaN, in float32 and float16: NaN is ignored and
# -0 < +0 (IEEE 754-2019 maximumNumber/minimumNumber), as fmaxf/fminf/__hmax/__hmin give
# on the H200 (docs/semantics.md §8). 1/x shows the sign of a zero result (±inf).
import tilelang.language as T

N = 6


@T.prim_func
def main(
    a: T.Tensor((N,), T.float32),
    b: T.Tensor((N,), T.float32),
    m: T.Tensor((N,), T.float32),
    k: T.Tensor((N,), T.float32),
    inv_max: T.Tensor((N,), T.float32),
    inv_min: T.Tensor((N,), T.float32),
    inv_max16: T.Tensor((N,), T.float32),
    inv_min16: T.Tensor((N,), T.float32),
):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            # m, k are inf where a, b are: inf - inf makes the NaN lanes (TVM folds
            # a - a to 0); elsewhere a - 0 keeps a, the sign of a zero too
            p = a[j] - m[j]
            q = b[j] - k[j]
            inv_max[j] = T.float32(1) / T.max(p, q)
            inv_min[j] = T.float32(1) / T.min(p, q)
            inv_max16[j] = T.float32(1) / T.cast(T.max(T.cast(p, T.float16), T.cast(q, T.float16)), T.float32)
            inv_min16[j] = T.float32(1) / T.cast(T.min(T.cast(p, T.float16), T.cast(q, T.float16)), T.float32)
