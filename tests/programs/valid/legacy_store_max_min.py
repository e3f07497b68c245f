# expect: ok
# input: x=[[-3, -1, -4, -1], [5, 9, 2, 6], [-5, 3, 5, -8], [0, -7, 9, -9]]
# expect: result hi=[-1.0, 9.0, 5.0, 9.0]
# expect: result lo=[-4.0, 2.0, -8.0, -9.0]
#
# Legacy max/min reducers: T.fill with the identity (-inf / +inf) starts the epoch, and
# `acc[i] = T.max(acc[i], v)` / `T.min` are the update forms.
import tilelang.language as T

R = 4
C = 4


@T.prim_func
def main(
    x: T.Tensor((R, C), T.float32),
    hi: T.Tensor((R,), T.float32),
    lo: T.Tensor((R,), T.float32),
):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((R, C), T.float32)
        T.copy(x, x_frag)
        mx = T.alloc_reducer((R,), T.float32, op="max", replication="all")
        mn = T.alloc_reducer((R,), T.float32, op="min", replication="all")
        T.fill(mx, -T.infinity(T.float32))
        T.fill(mn, T.infinity(T.float32))
        for i, j in T.Parallel(R, C):
            mx[i] = T.max(mx[i], x_frag[i, j])
            mn[i] = T.min(mn[i], x_frag[i, j])
        T.finalize_reducer(mx)
        T.finalize_reducer(mn)
        T.copy(mx, hi)
        T.copy(mn, lo)
