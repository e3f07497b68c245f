# expect: error R209 at 18
#
# A float8_e4m3fn value truncated to an integer lies in -448..448 (float8 saturates,
# docs/semantics.md §8): `T.cast(a[j], T.int32) + 448` reaches 896, one past this
# reducer's shape. Z3 finds the value (a[j] = 448) from the dtype's range alone.
import tilelang.language as T

N = 64


@T.prim_func
def main(a: T.Tensor((N,), T.float8_e4m3fn), hist: T.Tensor((896,), T.int32)):
    with T.Kernel(1, threads=64) as bx:
        h = T.alloc_reducer((896,), T.int32, op="sum")
        T.reducer_init(h)
        for j in T.Parallel(N):
            # one slot short of the float8 range
            T.reducer_update(h[T.cast(a[j], T.int32) + 448], 1)  # <- R209
        q = T.alloc_fragment((896,), T.int32)
        T.finalize_reducer(h, q)
        T.copy(q, hist)
