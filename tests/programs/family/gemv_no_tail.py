# expect: error R220 at 34
# for-all: M in 1..1048576, K in 1..1048576
#
# examples/gemv_family.py without the column test on the load of A: the file's own
# sizes (K = 960, a multiple of BLOCK_K) verify, but a K that is not a multiple of 24
# reads past the end of a row. The smallest counterexample is M=1, K=1, and the
# instance at those sizes fails concretely (the interpreter's R102).
import tilelang.language as T

M = 16
K = 960
BLOCK_M = 2
BLOCK_K = 24
THREADS = 128
dtype = T.float16
accum_dtype = T.float32


@T.prim_func
def main(
    A: T.Tensor((M, K), dtype),
    x: T.Tensor((K,), dtype),
    y: T.Tensor((M,), accum_dtype),
):
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        acc = T.alloc_reducer((BLOCK_M,), accum_dtype, op="sum")
        y_frag = T.alloc_fragment((BLOCK_M,), accum_dtype)
        T.reducer_init(acc)
        for ko in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=2):
            a_frag = T.alloc_fragment((BLOCK_M, BLOCK_K), dtype)
            x_frag = T.alloc_fragment((BLOCK_K,), dtype)
            for i, k in T.Parallel(BLOCK_M, BLOCK_K):
                if bx * BLOCK_M + i < M:
                    a_frag[i, k] = A[bx * BLOCK_M + i, ko * BLOCK_K + k]
                else:
                    a_frag[i, k] = T.float16(0)
            for k in T.Parallel(BLOCK_K):
                x_frag[k] = T.if_then_else(
                    ko * BLOCK_K + k < K, x[ko * BLOCK_K + k], T.cast(0, dtype))
            for i, k in T.Parallel(BLOCK_M, BLOCK_K):
                T.reducer_update(acc[i], T.cast(a_frag[i, k], accum_dtype)
                                 * T.cast(x_frag[k], accum_dtype))
        T.finalize_reducer(acc, y_frag)
        for i in T.Parallel(BLOCK_M):
            if bx * BLOCK_M + i < M:
                y[bx * BLOCK_M + i] = y_frag[i]
