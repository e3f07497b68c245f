# expect: ok
# input: x=[1e308, 1e308, -1e308, 0.0]
#
# Issue 24: the exact sum is 1e308, but an order that adds 1e308 + 1e308 first overflows
# float64 to +inf (and inf - 1e308 stays inf), as the simulated plans do. +inf is a
# legal result of that order, so it is accepted (the report says some order overflows
# there); no order reaches -inf, so a wrong finite answer is still refuted.
import tilelang.language as T

N = 4


@T.prim_func
def main(x: T.Tensor((N,), T.float64), out: T.Tensor((1,), T.float64)):
    with T.Kernel(1, threads=4) as bx:
        x_frag = T.alloc_fragment((N,), T.float64)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float64, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x_frag[j])
        result = T.alloc_fragment((1,), T.float64)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
