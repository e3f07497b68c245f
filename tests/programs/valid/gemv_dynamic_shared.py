# expect: ok
#
# The streaming GEMV with a wide tile: fp16 A in 64 x 512 tiles on 256 threads, fp32
# accumulation. A_shared (64 KB, twice: the T.Pipelined loop's two stages), the x tile's
# stages (the pipeline stages it through shared memory too) and the
# reducer's finalize workspace are over the 48 KB of static shared memory, so the
# generated kernel keeps them in one dynamic shared buffer at the resource model's offsets
# and the launch opts into that many bytes. 64 * 1024 = 65536 contributions.
import tilelang.language as T

M = 64
K = 1024
BLOCK_M = 64
BLOCK_K = 512
THREADS = 256
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
