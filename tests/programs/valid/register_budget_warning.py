# expect: ok
#
# The streaming GEMV at TileLang's 64 x 512 tiling on 128 threads (fp16 A, fp32
# accumulation). Each thread holds 256 fp16 elements of A_frag and, in the fast plan, 253
# partials of acc that live across the tile loop: the register estimate is over the 255
# a thread can have, so the plan carries an R506 *warning* (ptxas keeps the partials in
# local memory: a stack frame of about 1 KB). A warning never rejects: the program
# verifies. A_shared (64 KB) and the workspace (32 KB) are dynamic shared memory.
import tilelang.language as T

M = 64
K = 1024
BLOCK_M = 64
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
