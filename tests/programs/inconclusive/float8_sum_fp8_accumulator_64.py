# expect: inconclusive
#
# A sum of 64 float8_e4m3fn terms in a float8_e4m3fn reducer: with u = 2^-4 and n = 65
# terms (the seed counts) γ(n) is vacuous and the seeded ±1/2, ±1 inputs are too many
# for every order to stay exact (their positive part passes 2^4 · 1/2), so no order's
# result can be told from a wrong one: the elements are not judged and the verdict is
# inconclusive (exit 5), never verified. An order whose partial passes 448 would
# saturate there and go on from 448 (docs/semantics.md §8): not judged either.
import tilelang.language as T

N = 64


@T.prim_func
def main(x: T.Tensor((N,), T.float8_e4m3fn), out: T.Tensor((1,), T.float8_e4m3fn)):
    with T.Kernel(1, threads=64) as bx:
        acc = T.alloc_reducer((1,), T.float8_e4m3fn, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x[j])
        result = T.alloc_fragment((1,), T.float8_e4m3fn)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
