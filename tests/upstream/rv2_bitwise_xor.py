# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reducer_v2.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: _bitwise_rowreduce_kernel; params: M=16, K=64, threads=128, op='bitxor'
# changed: nothing (the rest of the file, torch and test code, dropped)
# constructs: factory, factory-param-without-default, reducer-v2
# blocked-by: factory-param-without-default
# expect: error R102 at 14
# bound-blocked-by: none
# bound: ok
import tilelang
import tilelang.language as T
import tilelang.testing


def _bitwise_rowreduce_kernel(M, K, threads, op):
    @T.prim_func
    def kernel(A: T.Tensor((M, K), T.int32), B: T.Tensor((M,), T.int32)):
        with T.Kernel(1, threads=threads):
            src = T.alloc_fragment((M, K), T.int32)
            T.copy(A, src)
            acc = T.alloc_reducer((M,), T.int32, op=op)
            T.reducer_init(acc)
            for i, k in T.Parallel(M, K):
                T.reducer_update(acc[i], src[i, k])
            result = T.alloc_fragment((M,), T.int32)
            T.finalize_reducer(acc, result)
            T.copy(result, B)

    return kernel
