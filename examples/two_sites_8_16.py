# expect: ok
# input: a=arange(1, 9)
# input: b=arange(1, 17)
# expect: result out=[172.0]
#
# The RFC's compositionality example: two update sites into one output, an 8-wide loop
# (16 replicas of 8-thread groups on 128 threads) and a 16-wide loop (8 replicas of
# 16-thread groups). Neither AllReduce<8> nor AllReduce<16> covers both, so no single
# saved ownership plan is right; counting each logical contribution once is. 36 + 136.
import tilelang.language as T

A_N = 8
B_N = 16
THREADS = 128


@T.prim_func
def main(
    a: T.Tensor((A_N,), T.float32),
    b: T.Tensor((B_N,), T.float32),
    out: T.Tensor((1,), T.float32),
):
    with T.Kernel(1, threads=THREADS) as bx:
        a_frag = T.alloc_fragment((A_N,), T.float32)
        b_frag = T.alloc_fragment((B_N,), T.float32)
        T.copy(a, a_frag)
        T.copy(b, b_frag)

        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(A_N):
            T.reducer_update(acc[0], a_frag[j])
        for k in T.Parallel(B_N):
            T.reducer_update(acc[0], b_frag[k])

        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
