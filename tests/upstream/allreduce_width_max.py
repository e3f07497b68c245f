# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reduce.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: _make_allreduce_width_kernel; params: reduce_fn=T.reduce_max, M=4, width=64, threads=64
# changed: nothing (the rest of the file, torch and test code, dropped)
# constructs: factory, factory-param-without-default, function-param
# blocked-by: function-param
# expect: error R102 at 14
# bound-blocked-by: none
# bound: ok
import tilelang
import tilelang.language as T
import tilelang.testing


def _make_allreduce_width_kernel(reduce_fn, M, width, threads):
    @T.prim_func
    def kernel(A: T.Tensor((M, width), T.float32), B: T.Tensor((M,), T.float32)):
        with T.Kernel(1, threads=threads):
            src = T.alloc_fragment((M, width), T.float32)
            dst = T.alloc_fragment((M,), T.float32)
            T.copy(A, src)
            reduce_fn(src, dst, dim=1)
            T.copy(dst, B)

    return kernel
