# expect: ok
# input: x=[1, 2, 3, 4, 5, 6, 7, 8]
# expect: result first=[36.0]
# expect: result second=[204.0]
#
# A legacy reducer used for two epochs: T.clear reopens it after the in-place finalize,
# and the second epoch sees none of the first one's partials (sum of x, then sum of x^2).
import tilelang.language as T

N = 8


@T.prim_func
def main(
    x: T.Tensor((N,), T.float32),
    first: T.Tensor((1,), T.float32),
    second: T.Tensor((1,), T.float32),
):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum", replication="all")
        T.clear(acc)
        for j in T.Parallel(N):
            acc[0] += x_frag[j]
        T.finalize_reducer(acc)
        T.copy(acc, first)
        T.clear(acc)
        for j in T.Parallel(N):
            acc[0] += x_frag[j] * x_frag[j]
        T.finalize_reducer(acc)
        T.copy(acc, second)
