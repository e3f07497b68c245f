# expect: ok
# input: x=[3, -1, 4, -1, 5, -9, 2, 6, -5, 3, 5, -8, 9, 7, -9, 3]
# expect: result relu_sum=[47.0]
# expect: result clipped=[43.0]
#
# T.if_then_else inside a contribution (every iteration contributes, some contribute 0),
# and a clipped one: positive values capped at 6 (a T.min inside the T.if_then_else).
import tilelang.language as T

N = 16


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    relu_sum: T.Tensor((1,), T.float32),
    clipped: T.Tensor((1,), T.float32),
):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        r = T.alloc_reducer((1,), T.float32, op="sum")
        c = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(r)
        T.reducer_init(c)
        for j in T.Parallel(N):
            T.reducer_update(r[0], T.if_then_else(x_frag[j] > 0, x_frag[j], T.float32(0)))
            T.reducer_update(c[0], T.if_then_else(x_frag[j] > 0, T.min(x_frag[j], 6.0), 0.0))
        r_frag = T.alloc_fragment((1,), T.float32)
        c_frag = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(r, r_frag)
        T.finalize_reducer(c, c_frag)
        T.copy(r_frag, relu_sum)
        T.copy(c_frag, clipped)
