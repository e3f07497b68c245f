# expect: ok
#
# The absolute maximum of float8 rows, twice: T.reduce_absmax of a float8_e5m2 fragment
# into float16 (as TileLang's own reduce test writes it for float8_e4m3fn), and a max
# reducer in float32 updated with |x| of float8_e4m3fn values. Both are exact: float8
# values widen to float16 and float32 exactly, and max is exact in any order.
import tilelang.language as T

M = 4
N = 64


@T.prim_func
def main(A: T.Tensor((M, N), T.float8_e5m2), B: T.Tensor((M, N), T.float8_e4m3fn),
         a_max: T.Tensor((M,), T.float16), b_max: T.Tensor((M,), T.float32)):
    with T.Kernel(1, threads=64) as bx:
        a = T.alloc_fragment((M, N), T.float8_e5m2)
        a_out = T.alloc_fragment((M,), T.float16)
        T.copy(A, a)
        T.reduce_absmax(a, a_out, dim=1)
        T.copy(a_out, a_max)
        acc = T.alloc_reducer((M,), T.float32, op="max")
        T.reducer_init(acc)
        for i, j in T.Parallel(M, N):
            T.reducer_update(acc[i], T.abs(T.cast(B[i, j], T.float32)))
        result = T.alloc_fragment((M,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, b_max)
