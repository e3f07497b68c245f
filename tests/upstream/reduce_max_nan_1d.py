# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reduce_maxmin_nan.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: _make_reduce_kernel; params: reduce_fn=T.reduce_max, length=64, dtype=T.float32, nan_propagate=True
# changed: nothing (the rest of the file, torch and test code, dropped)
# constructs: factory, factory-param-without-default, nan_propagate, function-param
# blocked-by: function-param
# expect: error R102 at 14
# bound-blocked-by: none
# bound: ok
import tilelang
import tilelang.testing
import tilelang.language as T


def _make_reduce_kernel(reduce_fn, length, dtype, *, nan_propagate):

    @T.prim_func
    def kernel(a: T.Tensor((length,), dtype), out: T.Tensor((1,), dtype)):
        with T.Kernel(1, threads=32):
            frag = T.alloc_fragment((length,), dtype)
            out_frag = T.alloc_fragment((1,), dtype)
            T.copy(a, frag)
            reduce_fn(frag, out_frag, nan_propagate=nan_propagate)
            T.copy(out_frag, out)

    return kernel
