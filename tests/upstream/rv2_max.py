# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reducer_v2.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: kernel; params: op='max', M=16, N=64, threads=128
# changed: the enclosing test's constants (M, N, threads = 16, 64, 128) moved to module level; the
#   kernel moved out of its test function (dedented); the test's torch harness dropped; added op =
#   "max" (the test's pytest parameter, its first value)
# constructs: reducer-v2
# blocked-by: none
# expect: ok
import tilelang
import tilelang.language as T
import tilelang.testing

M, N, threads = 16, 64, 128
op = "max"


@T.prim_func
def kernel(A: T.Tensor((M, N), T.float32), B: T.Tensor((M,), T.float32)):
    with T.Kernel(1, threads=threads):
        a_frag = T.alloc_fragment((M, N), T.float32)
        T.copy(A, a_frag)
        acc = T.alloc_reducer((M,), T.float32, op=op)
        T.reducer_init(acc)
        for i, j in T.Parallel(M, N):
            T.reducer_update(acc[i], a_frag[i, j])
        result = T.alloc_fragment((M,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, B)
