# expect: ok
# input: x=[1, 2, 3, 4, 5, 6, 7, 8]
# input: n=[1, 2, 3, 4, 5, 6, 7, 8]
# expect: result out=[37.5]
# expect: result count=[136]
#
# A logical seed is combined exactly once, after the contributions, not once per thread:
# every partial starts at the identity 0. The legacy T.fill(acc, 1.5) would have put 1.5
# into all 128 partials (adding 192); T.reducer_init(acc, seed) means "start from seed".
import tilelang.language as T

BD = 8
THREADS = 128


@T.prim_func
def main(
    x: T.Tensor((BD,), T.float32),
    n: T.Tensor((BD,), T.int32),
    out: T.Tensor((1,), T.float32),
    count: T.Tensor((1,), T.int32),
):
    with T.Kernel(1, threads=THREADS) as bx:
        x_frag = T.alloc_fragment((BD,), T.float32)
        n_frag = T.alloc_fragment((BD,), T.int32)
        T.copy(x, x_frag)
        T.copy(n, n_frag)

        acc = T.alloc_reducer((1,), T.float32, op="sum")
        total = T.alloc_reducer((1,), T.int32, op="sum")
        T.reducer_init(acc, 1.5)
        T.reducer_init(total, 100)
        for j in T.Parallel(BD):
            T.reducer_update(acc[0], x_frag[j])
            T.reducer_update(total[0], n_frag[j])

        acc_frag = T.alloc_fragment((1,), T.float32)
        total_frag = T.alloc_fragment((1,), T.int32)
        T.finalize_reducer(acc, acc_frag)
        T.finalize_reducer(total, total_frag)
        T.copy(acc_frag, out)
        T.copy(total_frag, count)
