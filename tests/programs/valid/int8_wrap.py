# expect: ok
# input: x=[100, 100, 100, -50, 7, 1, 2, 3]
# expect: result out=[7]
#
# An int8 sum wraps in two's complement: 263 mod 256 = 7. Integer results are compared
# exactly.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.int8), out: T.Tensor((1,), T.int8)):
    with T.Kernel(1, threads=32) as bx:
        x_frag = T.alloc_fragment((N,), T.int8)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.int8, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x_frag[j])
        result = T.alloc_fragment((1,), T.int8)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
