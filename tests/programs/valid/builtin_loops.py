# expect: ok
# input: x=[1.0, 2.0, 3.0, 4.0]
# expect: result y=[1.0, 2.0, 3.0, 4.0, 2.0, 4.0, 6.0, 8.0, 3.0, 6.0, 9.0, 12.0, 4.0, 8.0, 12.0, 16.0]
# expect: result s=[10.0, 20.0, 30.0, 40.0]
# expect: result u=[1.0, 3.0, 6.0, 10.0]
#
# TileLang's loop spellings: T.Serial and T.Unroll are its aliases of T.serial and
# T.unroll, T.Vectorized of T.vectorized (language/loop.py). A vectorized loop means its
# iterations in order, like T.serial (docs/semantics.md, "Loops"); its body here stores
# element-wise, with no element read that another iteration writes.
import tilelang.language as T

N = 4


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    y: T.Tensor((N, N), T.float32),
    s: T.Tensor((N,), T.float32),
    u: T.Tensor((N,), T.float32),
):
    with T.Kernel(1, threads=32) as bx:
        f = T.alloc_fragment((N,), T.float32)
        T.copy(x, f)
        for i in T.Parallel(N):
            for k in T.vectorized(N):
                y[k, i] = f[i] * (k + 1)
            for k in T.Vectorized(0, N):
                s[i] = f[i] * 10
        for i in T.Parallel(N):
            u[i] = 0.0
            for m in T.Serial(0, N, 1):
                if m <= i:
                    u[i] = u[i] + x[m]
        for i in T.Parallel(N):
            for m in T.Unroll(2):
                u[i] = u[i] + 0.0 * m
