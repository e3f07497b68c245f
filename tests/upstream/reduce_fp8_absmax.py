# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reduce.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: kernel; params: none
# changed: the kernel moved out of its test function (dedented); the test's torch harness dropped
# constructs: float8, reduce_absmax
# blocked-by: none
# expect: ok
import tilelang
import tilelang.language as T
import tilelang.testing


@T.prim_func
def kernel(A: T.Tensor((4, 32), T.float8_e4m3fn), B: T.Tensor((4,), T.float16)):
    with T.Kernel(1, threads=32):
        src = T.alloc_fragment((4, 32), T.float8_e4m3fn)
        dst = T.alloc_fragment((4,), T.float16)
        T.copy(A, src)
        T.reduce_absmax(src, dst, dim=1)
        T.copy(dst, B)
