# expect: ok
# input: x=[1.0, 1e400, -6.0, 7.0, 2.0, 0.5, -3.0, 3.0, 1.0, 2.0, -6.0, 7.5, 2.0, 0.5, -3.0, 3.0]
# input: w=[1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
# expect: result max_h=[7.0, 7.5]
# expect: result min_b=[-6.0, -6.0]
# expect: result abs_h=[7.0, 7.5]
#
# nan_propagate=True into a float16 or bfloat16 destination is TileLang's MaxOpNan /
# MinOpNan (__hmax_nan/__hmin_nan): a NaN term makes the result NaN. Row 0 holds
# inf * 0 = NaN: its max (float16) and min (bfloat16) are NaN (nan_h, nan_b); row 1
# holds none. Without the flag the NaN is ignored, as T.max ignores it (max_h, min_b,
# abs_h: row 0's NaN skipped, its max 7 and min -6). The NaN-propagating results are
# outputs themselves (nan_h, nan_b: NaN in row 0, 7.5 and -6 in row 1; tests/test_builtins.py
# checks the values), not flags computed by `v != v`, which TVM may fold to false.
import tilelang.language as T

M = 2
N = 8


@T.prim_func
def main(x: T.Tensor((M, N), T.float32), w: T.Tensor((M, N), T.float32),
         nan_h: T.Tensor((M,), T.float16), nan_b: T.Tensor((M,), T.bfloat16),
         max_h: T.Tensor((M,), T.float16), min_b: T.Tensor((M,), T.bfloat16),
         abs_h: T.Tensor((M,), T.float16)):
    with T.Kernel(1, threads=32) as bx:
        h = T.alloc_fragment((M, N), T.float16)
        b = T.alloc_fragment((M, N), T.bfloat16)
        for i, j in T.Parallel(M, N):
            h[i, j] = T.cast(x[i, j] * w[i, j], T.float16)
            b[i, j] = T.cast(x[i, j] * w[i, j], T.bfloat16)
        rh = T.alloc_fragment((M,), T.float16)
        rb = T.alloc_fragment((M,), T.bfloat16)
        T.reduce_max(h, rh, dim=1, nan_propagate=True)
        T.reduce_min(b, rb, dim=1, nan_propagate=True)
        T.copy(rh, nan_h)
        T.copy(rb, nan_b)
        T.reduce_max(h, rh, dim=1)
        T.reduce_min(b, rb, dim=1, nan_propagate=False)
        T.copy(rh, max_h)
        T.copy(rb, min_b)
        T.reduce_absmax(h, rh, dim=1)
        T.copy(rh, abs_h)
