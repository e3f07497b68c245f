# expect: ok
# input: x=[[1.5, 0.875, 3.25, 0.0703125], [0.5, -1.0, 0.5, 1.0], [10.0, -0.375, 0.1875, 2.5]]
#
# A sum of 4 float8_e4m3fn terms in a float8_e4m3fn reducer: every partial is rounded
# to float8 (p = 4, u = 2^-4), and saturates past ±448 instead of overflowing
# (docs/semantics.md §8). Row 1 is exact in every order (multiples of 1/2 whose
# positive and negative parts stay within 2^4 · 1/2: bound 0); rows 0 and 2 round on
# the way, and their bound is the γ(5) one of docs/semantics.md §9, finite because
# n·u = 5/16 < 1/2. A longer sum is inconclusive
# (tests/programs/inconclusive/float8_sum_fp8_accumulator_64.py).
import tilelang.language as T

M = 3
N = 4


@T.prim_func
def main(x: T.Tensor((M, N), T.float8_e4m3fn), out: T.Tensor((M,), T.float8_e4m3fn)):
    with T.Kernel(1, threads=32) as bx:
        acc = T.alloc_reducer((M,), T.float8_e4m3fn, op="sum")
        T.reducer_init(acc)
        for i, j in T.Parallel(M, N):
            T.reducer_update(acc[i], x[i, j])
        result = T.alloc_fragment((M,), T.float8_e4m3fn)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
