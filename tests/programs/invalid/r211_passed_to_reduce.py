# expect: error R211 at 19
#
# The reducer is passed to another tile op (T.reduce_sum) as if it were a fragment.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((4,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[j % 4], x_frag[j])
        s = T.alloc_fragment((1,), T.float32)
        T.reduce_sum(acc, s, dim=0)  # <- R211
        result = T.alloc_fragment((4,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(s, out)
