# expect: error R213 at 26
# expect: error R210 at 35
# expect: error R201 at 45
# expect: error R209 at 51
#
# Four independent reducers, each with its own mistake; every one must be reported at
# its own line, not only the first.
import tilelang.language as T

N = 8


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    a_out: T.Tensor((1,), T.float32),
    b_out: T.Tensor((1,), T.int32),
    c_out: T.Tensor((1,), T.float32),
    d_out: T.Tensor((4,), T.float32),
):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)

        a = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.fill(a, 2.0)  # <- R213
        for j in T.Parallel(N):
            a[0] += x_frag[j]
        T.finalize_reducer(a)
        T.copy(a, a_out)

        b = T.alloc_reducer((1,), T.int32, op="sum")
        T.reducer_init(b)
        for j in T.Parallel(N):
            T.reducer_update(b[0], x_frag[j])  # <- R210
        b_res = T.alloc_fragment((1,), T.int32)
        T.finalize_reducer(b, b_res)
        T.copy(b_res, b_out)

        c = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(c)
        c_res = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(c, c_res)
        for j in T.Parallel(N):
            T.reducer_update(c[0], x_frag[j])  # <- R201
        T.copy(c_res, c_out)

        d = T.alloc_reducer((4,), T.float32, op="sum")
        T.reducer_init(d)
        for j in T.Parallel(N):
            T.reducer_update(d[j], x_frag[j])  # <- R209
        d_res = T.alloc_fragment((4,), T.float32)
        T.finalize_reducer(d, d_res)
        T.copy(d_res, d_out)
