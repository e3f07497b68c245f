# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reduce.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: kernel; params: M=128, N=128, dtype=T.float16, op='max', src_scope='fragment', dst_scope='fragment'
# changed: the kernel moved out of its test function (dedented); the test's torch harness dropped
# constructs: factory, factory-param-without-default, T.infinity, reduce_sum, reduce_max, reduce-clear-false, disable_tma, if-on-param
# blocked-by: factory-param-without-default
# expect: error R102 at 15
# bound-blocked-by: none
# bound: ok
import tilelang
import tilelang.language as T
import tilelang.testing


@tilelang.jit(out_idx=-1)
def kernel(M, N, dtype, op, src_scope, dst_scope):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=32):
            if src_scope == "fragment":
                src = T.alloc_fragment((M, N), dtype)
            else:
                src = T.alloc_shared((M, N), dtype)
            if dst_scope == "fragment":
                dst = T.alloc_fragment((M,), dtype)
            else:
                dst = T.alloc_shared((M,), dtype)
            T.copy(A, src, disable_tma=src_scope == "shared")
            if op == "sum":
                T.fill(dst, 1)
                T.reduce_sum(src, dst, dim=1, clear=False)
            elif op == "max":
                T.fill(dst, -T.infinity(dtype))
                T.reduce_max(src, dst, dim=1, clear=False)
            T.copy(dst, B)

    return main
