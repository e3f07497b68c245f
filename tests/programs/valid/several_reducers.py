# expect: ok
# input: x=[3, -1, 4, -1, 5, -9, 2, 6, -5, 3, 5, -8, 9, 7, -9, 3, 2, 3, -8, 4, 6, -2, 6, 4, -3, 3, 8, -3, 2, 7, -9, 5]
# expect: result s=[39.0]
# expect: result hi=[9.0]
# expect: result lo=[-9.0]
# expect: result neg=[11]
#
# Four reducers of three ops and two dtypes live in one kernel and one loop: each has
# its own epoch, identity and finalize.
import tilelang.language as T

N = 32


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    s: T.Tensor((1,), T.float32),
    hi: T.Tensor((1,), T.float32),
    lo: T.Tensor((1,), T.float32),
    neg: T.Tensor((1,), T.int32),
):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        r_sum = T.alloc_reducer((1,), T.float32, op="sum")
        r_max = T.alloc_reducer((1,), T.float32, op="max")
        r_min = T.alloc_reducer((1,), T.float32, op="min")
        r_neg = T.alloc_reducer((1,), T.int32, op="sum")
        T.reducer_init(r_sum)
        T.reducer_init(r_max)
        T.reducer_init(r_min)
        T.reducer_init(r_neg)
        for j in T.Parallel(N):
            T.reducer_update(r_sum[0], x_frag[j])
            T.reducer_update(r_max[0], x_frag[j])
            T.reducer_update(r_min[0], x_frag[j])
            T.reducer_update(r_neg[0], T.if_then_else(x_frag[j] < 0, 1, 0))
        f_sum = T.alloc_fragment((1,), T.float32)
        f_max = T.alloc_fragment((1,), T.float32)
        f_min = T.alloc_fragment((1,), T.float32)
        f_neg = T.alloc_fragment((1,), T.int32)
        T.finalize_reducer(r_sum, f_sum)
        T.finalize_reducer(r_max, f_max)
        T.finalize_reducer(r_min, f_min)
        T.finalize_reducer(r_neg, f_neg)
        T.copy(f_sum, s)
        T.copy(f_max, hi)
        T.copy(f_min, lo)
        T.copy(f_neg, neg)
