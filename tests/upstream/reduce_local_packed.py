# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reduce.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: kernel; params: op='sum'
# changed: the kernel moved out of its test function (dedented); the test's torch harness dropped;
#   added op = "sum" (the test's pytest parameter, its first value)
# constructs: factory, helper-fn, alloc_local, reduce_sum, reduce_max, reduce_min, reduce_absmax, reduce_abssum, if-on-param, reduce-local-source
# blocked-by: none
# expect: ok
import tilelang
import tilelang.language as T
import tilelang.testing

op = "sum"


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
def kernel():
    @T.prim_func
    def main(A: T.Tensor((8,), T.float16), B: T.Tensor((1,), T.float16)):
        with T.Kernel(1, threads=1):
            src = T.alloc_local((8,), T.float16)
            dst = T.alloc_local((1,), T.float16)
            for i in T.serial(8):
                src[i] = A[i]
            _reduce_op(T, op, src, dst, dim=0)
            B[0] = dst[0]

    return main
