# expect: ok
# for-all: M in 1..1048576, K in 1..1048576
#
# The GEMV of examples/gemv_nondividing.py as a family: verified for every M and K up
# to 2**20, not only at the sizes written below. Both tails are predicated: the loads
# test the row (bx * BLOCK_M + i < M) and the column (ko * BLOCK_K + k < K), and the
# result is stored row by row under the row test. `check` proves, with M and K
# symbolic, that every global access stays inside its tensor and that every A[m, k]
# enters the reduction exactly once (docs/design.md §21).
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
        acc = T.alloc_reducer((BLOCK_M,), accum_dtype, op="sum")
        y_frag = T.alloc_fragment((BLOCK_M,), accum_dtype)
        T.reducer_init(acc)
        for ko in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=2):
            a_frag = T.alloc_fragment((BLOCK_M, BLOCK_K), dtype)
            x_frag = T.alloc_fragment((BLOCK_K,), dtype)
            for i, k in T.Parallel(BLOCK_M, BLOCK_K):
                if bx * BLOCK_M + i < M and ko * BLOCK_K + k < K:
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
