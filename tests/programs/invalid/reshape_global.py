# expect: error R100 at 12
#
# A view of a global tensor is refused by name: a view is read as a copy, which is
# exact for a fragment or a shared buffer only; index the tensor itself.
import tilelang.language as T


@T.prim_func
def kernel(A: T.Tensor((4, 64), T.float32), B: T.Tensor((4,), T.float32)):
    with T.Kernel(1, threads=128):
        dst = T.alloc_fragment((4,), T.float32)
        flat = T.reshape(A, (256,))  # <- R100
        src = T.alloc_fragment((4, 64), T.float32)
        T.copy(A, src)
        T.reduce_sum(src, dst, dim=1)
        T.copy(dst, B)
