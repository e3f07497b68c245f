# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reducer_v2.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: kernel; params: M=8, K=16, threads=128
# changed: the enclosing test's constants (M, K, threads = 8, 16, 128) moved to module level; the
#   kernel moved out of its test function (dedented); the test's torch harness dropped
# constructs: reducer-v2
# blocked-by: none
# expect: ok
import tilelang
import tilelang.language as T
import tilelang.testing

M, K, threads = 8, 16, 128


@T.prim_func
def kernel(A: T.Tensor((M, K), T.float32), B: T.Tensor((M,), T.float32)):
    with T.Kernel(1, threads=threads):
        src = T.alloc_fragment((M, K), T.float32)
        T.copy(A, src)
        acc = T.alloc_reducer((M,), T.float32, op="sum")
        T.reducer_init(acc)
        for i in T.Parallel(M):
            for k in T.serial(K):
                T.reducer_update(acc[i], src[i, k])
        result = T.alloc_fragment((M,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, B)
