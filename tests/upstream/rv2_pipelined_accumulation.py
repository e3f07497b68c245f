# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reducer_v2.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: kernel; params: M=32, K=512, BLOCK_K=128, threads=128
# changed: the enclosing test's constants (M, K, BLOCK_K, threads = 32, 512, 128, 128) moved to
#   module level; the kernel moved out of its test function (dedented); the test's torch harness
#   dropped
# tilelang-config: tl.disable_warp_specialized=true (the test's pass_configs)
# constructs: reducer-v2, T.Pipelined
# blocked-by: none
# expect: ok
import tilelang
import tilelang.language as T
import tilelang.testing

M, K, BLOCK_K, threads = 32, 512, 128, 128


@T.prim_func
def kernel(A: T.Tensor((M, K), T.float32), B: T.Tensor((M,), T.float32)):
    with T.Kernel(1, threads=threads):
        acc = T.alloc_reducer((M,), T.float32, op="sum")
        T.reducer_init(acc)
        a_shared = T.alloc_shared((M, BLOCK_K), T.float32)
        for k_tile in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=2):
            T.copy(A[0, k_tile * BLOCK_K], a_shared)
            for i, k in T.Parallel(M, BLOCK_K):
                T.reducer_update(acc[i], a_shared[i, k])
        result = T.alloc_fragment((M,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, B)
