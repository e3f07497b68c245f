# expect: ok
#
# The streaming GEMV with a 128 x 512 tile on 128 threads (fp16 A, fp32 accumulation).
# Each thread holds 512 fp16 elements of A_frag (256 registers) and 64 partials of acc
# that live across the tile loop: the register estimate is over the 255 a thread can
# have, so the plan carries an R506 *warning* (ptxas keeps part of them in local memory).
# A warning never rejects: the program verifies. A_shared (128 KB) is dynamic shared
# memory.
import tilelang.language as T

M = 128
K = 1024
BLOCK_M = 128
BLOCK_K = 512
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
        A_shared = T.alloc_shared((BLOCK_M, BLOCK_K), dtype)
        A_frag = T.alloc_fragment((BLOCK_M, BLOCK_K), dtype)
        x_frag = T.alloc_fragment((BLOCK_K,), dtype)

        acc = T.alloc_reducer((BLOCK_M,), accum_dtype, op="sum")
        T.reducer_init(acc)
        for ko in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=2):
            T.copy(A[bx * BLOCK_M, ko * BLOCK_K], A_shared)
            T.copy(A_shared, A_frag)
            T.copy(x[ko * BLOCK_K], x_frag)
            for i, k in T.Parallel(BLOCK_M, BLOCK_K):
                T.reducer_update(
                    acc[i], T.cast(A_frag[i, k], accum_dtype) * T.cast(x_frag[k], accum_dtype))

        y_frag = T.alloc_fragment((BLOCK_M,), accum_dtype)
        T.finalize_reducer(acc, y_frag)
        T.copy(y_frag, y[bx * BLOCK_M])
