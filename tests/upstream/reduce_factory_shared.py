# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reduce.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: kernel; params: M=32, N=32, dtype=T.float32, op='sum', src_scope='shared', dst_scope='shared', threads=32, batch=1
# changed: the kernel moved out of its test function (dedented); the test's torch harness dropped
# constructs: factory, factory-param-without-default, helper-fn, reduce-batch, reduce_sum, reduce_max, reduce_min, reduce_absmax, reduce_abssum, disable_tma, if-on-param, reduce-shared-source
# blocked-by: factory-param-without-default
# expect: error R102 at 29
# bound-blocked-by: none
# bound: ok
import tilelang
import tilelang.language as T
import tilelang.testing


def _reduce_op(T, op, src, dst, dim, batch=1):
    kwargs = {} if batch == 1 else {"batch": batch}
    if op == "sum":
        T.reduce_sum(src, dst, dim=dim, **kwargs)
    elif op == "max":
        T.reduce_max(src, dst, dim=dim, **kwargs)
    elif op == "min":
        T.reduce_min(src, dst, dim=dim, **kwargs)
    elif op == "abssum":
        T.reduce_abssum(src, dst, dim=dim, **kwargs)
    elif op == "absmax":
        T.reduce_absmax(src, dst, dim=dim, **kwargs)


@tilelang.jit(out_idx=-1)
def kernel(M, N, dtype, op, src_scope, dst_scope, threads, batch):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(1, threads=threads):
            if src_scope == "fragment":
                src = T.alloc_fragment((M, N), dtype)
            else:
                src = T.alloc_shared((M, N), dtype)
            if dst_scope == "fragment":
                dst = T.alloc_fragment((M,), dtype)
            else:
                dst = T.alloc_shared((M,), dtype)
            T.copy(A, src, disable_tma=src_scope == "shared")
            _reduce_op(T, op, src, dst, dim=1, batch=batch)
            T.copy(dst, B)

    return main
