# expect: ok
#
# Split-K GEMV y += A @ x for skinny A (few rows, long K), where one block per row tile
# leaves most of the GPU idle: the grid also splits K into SPLIT slices. Each block
# streams its slice of its BLOCK_M rows in T.Pipelined tiles into a reducer, finalizes it
# once, and adds its partial row sums into y with T.atomic_add — one contribution per
# row and block, issued by one thread per row (replica 0 of the T.Parallel's layout).
# Blocks meet only through those atomic adds, so `check` samples them and compares each
# block's contributions. y must hold zeros (or the value to add onto) before the launch.
# The benchmark benchmarks/gemv_splitk.py times it at 256 x 65536.
import tilelang.language as T

M = 64
K = 2048
BLOCK_M = 16
BLOCK_K = 128
SPLIT = 4
THREADS = 128
dtype = T.float16
accum_dtype = T.float32


@T.prim_func
def main(
    A: T.Tensor((M, K), dtype),
    x: T.Tensor((K,), dtype),
    y: T.Tensor((M,), accum_dtype),
):
    with T.Kernel(T.ceildiv(M, BLOCK_M), SPLIT, threads=THREADS) as (bx, bz):
        A_shared = T.alloc_shared((BLOCK_M, BLOCK_K), dtype)
        A_frag = T.alloc_fragment((BLOCK_M, BLOCK_K), dtype)
        x_frag = T.alloc_fragment((BLOCK_K,), dtype)

        acc = T.alloc_reducer((BLOCK_M,), accum_dtype, op="sum")
        T.reducer_init(acc)
        for ko in T.Pipelined(K // SPLIT // BLOCK_K, num_stages=2):
            T.copy(A[bx * BLOCK_M, bz * (K // SPLIT) + ko * BLOCK_K], A_shared)
            T.copy(A_shared, A_frag)
            T.copy(x[bz * (K // SPLIT) + ko * BLOCK_K], x_frag)
            for i, k in T.Parallel(BLOCK_M, BLOCK_K):
                T.reducer_update(
                    acc[i], T.cast(A_frag[i, k], accum_dtype) * T.cast(x_frag[k], accum_dtype))

        y_frag = T.alloc_fragment((BLOCK_M,), accum_dtype)
        T.finalize_reducer(acc, y_frag)
        for i in T.Parallel(BLOCK_M):
            T.atomic_add(y[bx * BLOCK_M + i], y_frag[i])
