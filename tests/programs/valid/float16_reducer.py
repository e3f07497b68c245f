# expect: ok
# input: x=[1, -2, 3, 0.5, 0.25, 8, -4, 16, 1, 1, 2, 2, 0.125, -0.5, 64, 3]
# expect: result out=[95.375]
#
# A float16 reducer accumulating float16 values; these inputs sum exactly in float16, so
# the result is exact. (The acceptance bound uses float16's unit roundoff 2^-11.)
import tilelang.language as T

N = 16


@T.prim_func
def main(x: T.Tensor((N,), T.float16), out: T.Tensor((1,), T.float16)):
    with T.Kernel(1, threads=64) as bx:
        x_frag = T.alloc_fragment((N,), T.float16)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float16, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x_frag[j])
        result = T.alloc_fragment((1,), T.float16)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
