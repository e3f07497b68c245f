# expect: error R100 at 13
#
# `T.view` with another dtype reinterprets the bits of the elements: refused by name
# (convert with T.cast).
import tilelang.language as T


@T.prim_func
def kernel(A: T.Tensor((64,), T.float32), B: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=64):
        src = T.alloc_shared((64,), T.float32)
        T.copy(A, src)
        bits = T.view(src, (64,), T.int32)  # <- R100
        dst = T.alloc_fragment((1,), T.float32)
        T.reduce_sum(src, dst, dim=0)
        T.copy(dst, B)
