# upstream: tile-ai/tilelang testing/python/language/test_tilelang_language_reduce.py @ a35008a42531c62b976ae4cec3855d4383db0f3c
# function: _make_sm80_batch_reduce_kernel; params: none
# changed: nothing (the rest of the file, torch and test code, dropped)
# constructs: factory, reduce-batch, reduce_sum, disable_tma, reduce-shared-source
# blocked-by: none
# expect: ok
import tilelang
import tilelang.language as T
import tilelang.testing


def _make_sm80_batch_reduce_kernel():
    @T.prim_func
    def kernel(
        A: T.Tensor((128, 64), T.float32),
        B: T.Tensor((128,), T.float32),
    ):
        with T.Kernel(1, threads=256):
            src = T.alloc_shared((128, 64), T.float32)
            dst = T.alloc_fragment((128,), T.float32)
            T.copy(A, src, disable_tma=True)
            T.reduce_sum(src, dst, dim=1, batch=4)
            T.copy(dst, B)

    return kernel
