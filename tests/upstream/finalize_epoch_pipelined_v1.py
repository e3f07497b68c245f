# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reduce.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: kernel; params: K=512, BLOCK_K=128, threads=128
# changed: the enclosing test's constants (K, BLOCK_K, threads = 512, 128, 128) moved to module
#   level; the kernel moved out of its test function (dedented); the test's torch harness dropped
# tilelang-config: tl.disable_warp_specialized=true, tl.disable_tma_lower=true (the test's _COMPILE_FLAGS)
# constructs: get_thread_binding, T.infinity, T.exp, T.log, reducer-v1, T.Pipelined
# blocked-by: none
# expect: ok
import tilelang
import tilelang.language as T
import tilelang.testing

K, BLOCK_K, threads = 512, 128, 128


@T.prim_func
def kernel(A: T.Tensor((K,), T.float32), B: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=threads):
        a_shared = T.alloc_shared((BLOCK_K,), T.float32)
        a_frag = T.alloc_fragment((BLOCK_K,), T.float32)
        running_max = T.alloc_fragment((1,), T.float32)
        running_sum = T.alloc_fragment((1,), T.float32)
        running_max[0] = -T.infinity(T.float32)
        running_sum[0] = 0.0
        for k_tile in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=2):
            T.copy(A[k_tile * BLOCK_K], a_shared)
            T.copy(a_shared, a_frag)

            new_max = T.alloc_reducer((1,), T.float32, op="max", replication="all")
            T.fill(new_max, running_max[0])
            for i in T.Parallel(BLOCK_K):
                new_max[0] = T.max(new_max[0], a_frag[i])
            T.finalize_reducer(new_max)

            new_sum = T.alloc_reducer((1,), T.float32, replication="all")
            T.fill(new_sum, 0.0)
            for i in T.Parallel(BLOCK_K):
                new_sum[0] += T.exp(a_frag[i] - new_max[0])
            T.finalize_reducer(new_sum)

            running_sum[0] = T.exp(running_max[0] - new_max[0]) * running_sum[0] + new_sum[0]
            running_max[0] = new_max[0]
        if T.get_thread_binding() == 0:
            B[0] = T.log(running_sum[0]) + running_max[0]
