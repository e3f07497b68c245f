# expect: ok
#
# float8_e4m3fn inputs summed per row into a float32 reducer: every float8 value widens
# to float32 exactly (docs/semantics.md §8), so the sum is the float32 sum of the
# float8 values, with float32's reassociation bound (docs/semantics.md §9).
import tilelang.language as T

M = 8
N = 256


@T.prim_func
def main(A: T.Tensor((M, N), T.float8_e4m3fn), out: T.Tensor((M,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        a = T.alloc_fragment((M, N), T.float8_e4m3fn)
        T.copy(A, a)
        acc = T.alloc_reducer((M,), T.float32, op="sum")
        T.reducer_init(acc)
        for i, j in T.Parallel(M, N):
            T.reducer_update(acc[i], T.cast(a[i, j], T.float32))
        result = T.alloc_fragment((M,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
