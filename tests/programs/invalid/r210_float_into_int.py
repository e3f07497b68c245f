# expect: error R210 at 18
#
# A float32 contribution into an int32 reducer: the conversion loses the fraction.
# Write T.cast(v, T.int32) if truncation is what you mean.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.int32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        cnt = T.alloc_reducer((1,), T.int32, op="sum")
        T.reducer_init(cnt)
        for j in T.Parallel(N):
            T.reducer_update(cnt[0], x_frag[j])  # <- R210
        result = T.alloc_fragment((1,), T.int32)
        T.finalize_reducer(cnt, result)
        T.copy(result, out)
