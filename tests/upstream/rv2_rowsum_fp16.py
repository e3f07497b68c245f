# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reducer_v2.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: _rowsum_kernel; params: M=32, K=64, threads=128, dtype=T.float16
# changed: nothing (the rest of the file, torch and test code, dropped)
# constructs: factory, factory-param-without-default, reducer-v2
# blocked-by: factory-param-without-default
# expect: error R102 at 14
# bound-blocked-by: none
# bound: ok
import tilelang
import tilelang.language as T
import tilelang.testing


def _rowsum_kernel(M, K, threads, dtype):
    @T.prim_func
    def kernel(A: T.Tensor((M, K), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=threads):
            src = T.alloc_fragment((M, K), dtype)
            T.copy(A, src)
            acc = T.alloc_reducer((M,), dtype, op="sum")
            T.reducer_init(acc)
            for i, k in T.Parallel(M, K):
                T.reducer_update(acc[i], src[i, k])
            result = T.alloc_fragment((M,), dtype)
            T.finalize_reducer(acc, result)
            T.copy(result, B)

    return kernel
