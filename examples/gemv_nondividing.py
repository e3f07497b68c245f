# expect: ok
#
# The GEMV of TileLang #2408, in the legacy surface it was reported in: the reduced tile
# width does not divide the thread count and K does not divide into tiles. A tile is
# BLOCK_M x BLOCK_K = 2 x 24 = 48 iterations on 128 threads, so TileLang replicates it
# floor(128 / 48) = 2 times (threads 96..127 sit out) and the old lowering returned 2 * y.
# K = 1000 is not a multiple of 24: the 42nd tile holds 16 real columns, and the loads
# guard the rest (the statement form for A, T.if_then_else for x, as TileLang's own GEMV
# examples write it), so padding contributes zeros.
import tilelang.language as T

M = 16
K = 1000
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
        o_reducer = T.alloc_reducer((BLOCK_M,), accum_dtype, op="sum", replication="all")
        T.clear(o_reducer)
        for ko in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=2):
            a_frag = T.alloc_fragment((BLOCK_M, BLOCK_K), dtype)
            x_frag = T.alloc_fragment((BLOCK_K,), dtype)
            for i, k in T.Parallel(BLOCK_M, BLOCK_K):
                if ko * BLOCK_K + k < K:
                    a_frag[i, k] = A[bx * BLOCK_M + i, ko * BLOCK_K + k]
                else:
                    a_frag[i, k] = T.float16(0)
            for k in T.Parallel(BLOCK_K):
                x_frag[k] = T.if_then_else(
                    ko * BLOCK_K + k < K, x[ko * BLOCK_K + k], T.cast(0, dtype))
            for i, k in T.Parallel(BLOCK_M, BLOCK_K):
                o_reducer[i] += T.cast(a_frag[i, k], accum_dtype) * T.cast(x_frag[k], accum_dtype)
        T.finalize_reducer(o_reducer)
        T.copy(o_reducer, y[bx * BLOCK_M])
