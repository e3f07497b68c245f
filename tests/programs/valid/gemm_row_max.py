# expect: ok
#
# Attention's first half: S = Q·Kᵀ (transpose_B, GemmWarpPolicy.FullRow: every warp owns
# 16 of the 64 rows), then the row maximum and row sum of S reduced over the gemm's
# accumulator layout — each row spread over the 4 lanes of a quad and its 4 column tiles.
import tilelang.language as T


@T.prim_func
def main(q: T.Tensor((128, 32), T.float16), k: T.Tensor((32, 32), T.float16),
         row_max: T.Tensor((128,), T.float32), row_sum: T.Tensor((128,), T.float32)):
    with T.Kernel(2, threads=128) as bx:
        q_s = T.alloc_shared((64, 32), T.float16)
        k_s = T.alloc_shared((32, 32), T.float16)
        s = T.alloc_fragment((64, 32), T.float32)
        m = T.alloc_fragment((64,), T.float32)
        l = T.alloc_fragment((64,), T.float32)
        T.copy(q[bx * 64, 0], q_s)
        T.copy(k, k_s)
        T.gemm(q_s, k_s, s, transpose_B=True, policy=T.GemmWarpPolicy.FullRow,
               clear_accum=True)
        T.reduce_max(s, m, dim=1)
        T.reduce_sum(s, l, dim=1)
        T.copy(m, row_max[bx * 64])
        T.copy(l, row_sum[bx * 64])
