# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reduce.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: _make_allreduce_dim0_scale_kernel; params: reduce_fn=T.reduce_sum, logical_width=32, scale=2
# changed: nothing (the rest of the file, torch and test code, dropped)
# constructs: factory, factory-param-without-default, function-param
# blocked-by: function-param
# expect: error R102 at 14
# bound-blocked-by: none
# bound: ok
import tilelang
import tilelang.language as T
import tilelang.testing


def _make_allreduce_dim0_scale_kernel(reduce_fn, logical_width, scale):
    @T.prim_func
    def kernel(
        A: T.Tensor((logical_width, scale), T.float32),
        B: T.Tensor((scale,), T.float32),
    ):
        with T.Kernel(1, threads=logical_width * scale):
            src = T.alloc_fragment((logical_width, scale), T.float32)
            dst = T.alloc_fragment((scale,), T.float32)
            T.copy(A, src)
            reduce_fn(src, dst, dim=0)
            T.copy(dst, B)

    return kernel
