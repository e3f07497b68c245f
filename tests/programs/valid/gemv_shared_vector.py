# expect: ok
# input: A=arange(0, 128)
# input: x=arange(0, 16)
# expect: result y=[1240.0, 3160.0, 5080.0, 7000.0, 8920.0, 10840.0, 12760.0, 14680.0]
#
# A shared-memory staged GEMV tile in float32 whose rows are 16-byte aligned: every
# block stages BLOCK_M x BLOCK_K of A and BLOCK_K of x in shared memory, tile by tile.
# The staging copies move runs of 4 floats per thread (codegen.layout_copy), and the
# CUDA renderer proves each run's address a multiple of 16 bytes for every block and
# tile (row length K = 16, tile offsets multiples of 8), so they are 128-bit float4
# accesses. y[m] = sum_k (16m + k) * k = 1920m + 1240.
import tilelang.language as T

M = 8
K = 16
BLOCK_M = 4
BLOCK_K = 8
THREADS = 32


@T.prim_func
def main(
    A: T.Tensor((M, K), T.float32),
    x: T.Tensor((K,), T.float32),
    y: T.Tensor((M,), T.float32),
):
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        A_shared = T.alloc_shared((BLOCK_M, BLOCK_K), T.float32)
        x_shared = T.alloc_shared((BLOCK_K,), T.float32)
        A_frag = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float32)
        acc = T.alloc_reducer((BLOCK_M,), T.float32, op="sum")
        T.reducer_init(acc)
        for ko in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=2):
            T.copy(A[bx * BLOCK_M, ko * BLOCK_K], A_shared)
            T.copy(x[ko * BLOCK_K], x_shared)
            T.copy(A_shared, A_frag)
            for i, k in T.Parallel(BLOCK_M, BLOCK_K):
                T.reducer_update(acc[i], A_frag[i, k] * x_shared[k])
        y_frag = T.alloc_fragment((BLOCK_M,), T.float32)
        T.finalize_reducer(acc, y_frag)
        T.copy(y_frag, y[bx * BLOCK_M])
