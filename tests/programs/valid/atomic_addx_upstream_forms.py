# expect: ok
#
# Two forms of TileLang's own atomic tests (testing/python/language/
# test_tilelang_language_atomic.py): atomic_addx2 over a 2-D grid with the indices
# bound to names inside the T.Parallel, and a block-level atomic_addx4 of bfloat16, here
# in one block of the grid. Outside any T.Parallel every thread that reaches an atomic
# issues it, so each of that block's 32 threads adds C[4:8] once (D[4:8] += 32·C[4:8]),
# as TileLang's CUDA runs it (docs/semantics.md §12).
import tilelang.language as T

M = 32
N = 64
block_M = 8
block_N = 16


@T.prim_func
def main(A: T.Tensor((M, N), T.float16), B: T.Tensor((M, N), T.float16),
         C: T.Tensor((16,), T.bfloat16), D: T.Tensor((16,), T.bfloat16)):
    with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), threads=32) as (bx, by):
        for i, j in T.Parallel(block_M, block_N // 2):
            idx_i = bx * block_M + i
            idx_j = by * block_N + j * 2
            T.atomic_addx2(B[idx_i, idx_j], A[idx_i, idx_j])
        if bx == 0 and by == 0:
            T.atomic_addx4(D[4], C[4])
