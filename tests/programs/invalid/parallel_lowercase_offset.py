# expect: error R100 at 14
#
# `T.parallel(start, stop)` with a start other than 0: refused by name (write
# `T.Parallel(n)` and add the offset to the index).
import tilelang.language as T


@T.prim_func
def kernel(A: T.Tensor((16,), T.float32), B: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=32):
        s = T.alloc_fragment((16,), T.float32)
        d = T.alloc_fragment((1,), T.float32)
        T.fill(s, 0.0)
        for j in T.parallel(2, 16):  # <- R100
            s[j] = A[j]
        T.reduce_sum(s, d, dim=0)
        T.copy(d, B)
