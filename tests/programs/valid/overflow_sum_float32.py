# expect: ok
# input: x=[3e38, 3e38, -3e38, 0.0]
#
# Issue 24: the exact sum is 3e38, but an order that adds 3e38 + 3e38 first overflows
# float32 to +inf (and inf - 3e38 stays inf), as the simulated plans do. +inf is a
# legal result of that order, so it is accepted (the report says some order overflows
# there); no order reaches -inf, so a wrong finite answer is still refuted.
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
