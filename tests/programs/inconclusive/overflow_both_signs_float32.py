# expect: inconclusive
# input: x=[3e38, 3e38, -3e38, -3e38]
#
# Issue 24: the exact sum is 0, but one order overflows to +inf (3e38 + 3e38 first),
# another to -inf, and one that meets both gives inf - inf = NaN. Every value is a
# legal result of some order, so nothing can be judged: inconclusive (exit 5).
import tilelang.language as T

N = 4


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=4) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x_frag[j])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
