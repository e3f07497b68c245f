# expect: error R506 at 24
#
# A staged GEMV whose tile of A is 128 x 512 float32: 256 KB of shared memory in one
# block, over the 227 KB an sm_90 block can have even with dynamic shared memory. The
# plan is refused (R506 at the largest array's allocation), not handed to ptxas.
import tilelang.language as T

M = 256
K = 512
BLOCK_M = 128
BLOCK_K = 512
THREADS = 128


@T.prim_func
def main(
    A: T.Tensor((M, K), T.float32),
    x: T.Tensor((K,), T.float32),
    y: T.Tensor((M,), T.float32),
):
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        x_frag = T.alloc_fragment((BLOCK_K,), T.float32)
        T.copy(x, x_frag)
        A_shared = T.alloc_shared((BLOCK_M, BLOCK_K), T.float32)
        T.copy(A[bx * BLOCK_M, 0], A_shared)
        acc = T.alloc_reducer((BLOCK_M,), T.float32, op="sum")
        T.reducer_init(acc)
        for i, k in T.Parallel(BLOCK_M, BLOCK_K):
            T.reducer_update(acc[i], A_shared[i, k] * x_frag[k])
        y_frag = T.alloc_fragment((BLOCK_M,), T.float32)
        T.finalize_reducer(acc, y_frag)
        T.copy(y_frag, y[bx * BLOCK_M])
