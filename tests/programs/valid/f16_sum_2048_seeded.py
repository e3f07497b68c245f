# expect: ok
#
# Issue 24: a float16 sum of 2048 terms. On uniform inputs its bound is vacuous
# (n·u ≥ 1/2: inconclusive, tests/test_inconclusive.py); the seeded float16 inputs are
# ±1/2 and ±1, whose positive and negative parts each stay within 2^11 · 1/2, so every
# order is exact (bound 0) and the check is a real one.
import tilelang.language as T

N = 2048


@T.prim_func
def main(x: T.Tensor((N,), T.float16), out: T.Tensor((1,), T.float16)):
    with T.Kernel(1, threads=256) as bx:
        x_frag = T.alloc_fragment((N,), T.float16)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float16, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x_frag[j])
        result = T.alloc_fragment((1,), T.float16)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
