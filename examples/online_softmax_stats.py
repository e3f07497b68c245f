# expect: ok
#
# Online-softmax statistics (the first half of flash attention's softmax): per row the
# running maximum m and the running sum of exp(x - m), streamed over column tiles. Each
# tile opens two reducer epochs: a max reducer for the tile's row maxima, then, after the
# new maximum is known, a sum reducer for exp(x - m_new); the previous sum is rescaled by
# exp(m_old - m_new). The reducers' epochs reopen every T.Pipelined iteration. A block
# owns BLOCK_M rows; T.Parallel(8, 64) = 512 iterations on 128 threads.
import tilelang.language as T

M = 16
N = 256
BLOCK_M = 8
BLOCK_N = 64
THREADS = 128
accum_dtype = T.float32


@T.prim_func
def main(
    X: T.Tensor((M, N), T.float32),
    row_max: T.Tensor((M,), accum_dtype),
    row_sum: T.Tensor((M,), accum_dtype),
):
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        x_shared = T.alloc_shared((BLOCK_M, BLOCK_N), T.float32)
        x_frag = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        m_i = T.alloc_fragment((BLOCK_M,), accum_dtype)
        l_i = T.alloc_fragment((BLOCK_M,), accum_dtype)
        m_tile = T.alloc_fragment((BLOCK_M,), accum_dtype)
        m_new = T.alloc_fragment((BLOCK_M,), accum_dtype)
        s_tile = T.alloc_fragment((BLOCK_M,), accum_dtype)
        tile_max = T.alloc_reducer((BLOCK_M,), accum_dtype, op="max")
        tile_sum = T.alloc_reducer((BLOCK_M,), accum_dtype, op="sum")

        T.fill(m_i, -T.infinity(accum_dtype))
        T.fill(l_i, 0)
        for t in T.Pipelined(T.ceildiv(N, BLOCK_N), num_stages=2):
            T.copy(X[bx * BLOCK_M, t * BLOCK_N], x_shared)
            T.copy(x_shared, x_frag)

            T.reducer_init(tile_max)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                T.reducer_update(tile_max[i], x_frag[i, j])
            T.finalize_reducer(tile_max, m_tile)
            for i in T.Parallel(BLOCK_M):
                m_new[i] = T.max(m_i[i], m_tile[i])

            T.reducer_init(tile_sum)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                T.reducer_update(tile_sum[i], T.exp(x_frag[i, j] - m_new[i]))
            T.finalize_reducer(tile_sum, s_tile)
            for i in T.Parallel(BLOCK_M):
                l_i[i] = l_i[i] * T.exp(m_i[i] - m_new[i]) + s_tile[i]
                m_i[i] = m_new[i]

        T.copy(m_i, row_max[bx * BLOCK_M])
        T.copy(l_i, row_sum[bx * BLOCK_M])
