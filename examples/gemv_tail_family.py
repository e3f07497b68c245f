# expect: ok
# for-all: M in 32..1048576, K in 64..1048576
#
# The streaming GEMV of examples/gemv_pipelined.py as a family whose tail is predicated
# on the update itself: the tiles are copied whole (a copy is clipped at the tensor's
# border), and only the columns inside K contribute (`ko * BLOCK_K + k < K` around the
# update). At the file's sizes the fast plan (width 8, shuffles only) is proved; for the
# family, the predicate mentions K but no thread, so every replica of an iteration
# evaluates it alike: it switches whole iterations on or off, and the fast-path proofs,
# made over every iteration it could leave on, hold for every M and K
# (docs/design.md §21). The rows past M compute partials that the clipped copy of y
# never stores. The family starts at one tile (M >= BLOCK_M, K >= BLOCK_K): a copy's
# region may be clipped at the border but not be larger than the tensor.
import tilelang.language as T

M = 128
K = 500
BLOCK_M = 32
BLOCK_K = 64
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
        A_frag = T.alloc_fragment((BLOCK_M, BLOCK_K), dtype)
        x_frag = T.alloc_fragment((BLOCK_K,), dtype)

        acc = T.alloc_reducer((BLOCK_M,), accum_dtype, op="sum")
        T.reducer_init(acc)
        for ko in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=2):
            T.copy(A[bx * BLOCK_M, ko * BLOCK_K], A_frag)
            T.copy(x[ko * BLOCK_K], x_frag)
            for i, k in T.Parallel(BLOCK_M, BLOCK_K):
                if ko * BLOCK_K + k < K:
                    T.reducer_update(
                        acc[i], T.cast(A_frag[i, k], accum_dtype) * T.cast(x_frag[k], accum_dtype))

        y_frag = T.alloc_fragment((BLOCK_M,), accum_dtype)
        T.finalize_reducer(acc, y_frag)
        T.copy(y_frag, y[bx * BLOCK_M])
