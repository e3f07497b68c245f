# expect: error R210 at 17
#
# A float16 value into a float8_e4m3fn reducer loses precision and range (4 significand
# bits, largest finite 448, docs/semantics.md §3): R210 unless written with T.cast. The
# other way round, float8 into float16, bfloat16, float32 or float64, is exact.
import tilelang.language as T

N = 64


@T.prim_func
def main(x: T.Tensor((N,), T.float16), out: T.Tensor((1,), T.float8_e4m3fn)):
    with T.Kernel(1, threads=64) as bx:
        acc = T.alloc_reducer((1,), T.float8_e4m3fn, op="max")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x[j])  # <- R210
        result = T.alloc_fragment((1,), T.float8_e4m3fn)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
