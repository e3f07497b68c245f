# expect: error R102 at 23:65
#
# Issue 24's campaign: num_stages=1e308 folds to a 309-digit integer that reached the
# resource model, whose byte count could not be divided as a float (exit 4, OverflowError
# in codegen/resources.py). A stage count is held to spec.limits.MAX_STAGES in the frontend.
import tilelang.language as T

M = 128
K = 1024
BLOCK_M = 128
BLOCK_K = 512


@T.prim_func
def main(A: T.Tensor((M, K), T.float16), x: T.Tensor((K,), T.float16),
         y: T.Tensor((M,), T.float32)):
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=128) as bx:
        A_shared = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        A_frag = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float16)
        x_frag = T.alloc_fragment((BLOCK_K,), T.float16)
        acc = T.alloc_reducer((BLOCK_M,), T.float32, op="sum")
        T.reducer_init(acc)
        for ko in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=1e308):
            T.copy(A[bx * BLOCK_M, ko * BLOCK_K], A_shared)
            T.copy(A_shared, A_frag)
            T.copy(x[ko * BLOCK_K], x_frag)
            for i, k in T.Parallel(BLOCK_M, BLOCK_K):
                T.reducer_update(acc[i], T.cast(A_frag[i, k], T.float32) * T.cast(x_frag[k], T.float32))
        y_frag = T.alloc_fragment((BLOCK_M,), T.float32)
        T.finalize_reducer(acc, y_frag)
        T.copy(y_frag, y[bx * BLOCK_M])
