# expect: ok
#
# Streaming GEMV y = A @ x, the reducer's reason to exist (the RFC's motivating kernel,
# modelled on TileLang's examples/gemv): fp16 A and x, fp32 accumulation. Each block owns
# BLOCK_M rows and streams K in T.Pipelined tiles; every tile adds BLOCK_M * BLOCK_K
# contributions into the same reducer, and there is exactly one collective, after the
# last tile. The products of two fp16 values are exact in fp32, so only the final sum is
# rounded. 128 * 512 = 65536 contributions.
import tilelang.language as T

M = 128
K = 512
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
