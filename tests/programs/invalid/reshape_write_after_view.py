# expect: error R101 at 23
#
# A `T.reshape` view is read as a copy of the elements when it is made (our buffers own
# their storage); writing the viewed buffer afterwards would make the copy stale, so it
# is refused at the write, naming the view's line.
import tilelang.language as T


@T.prim_func
def kernel(A: T.Tensor((4, 64), T.float32), B: T.Tensor((4, 2), T.float32)):
    with T.Kernel(1, threads=128):
        src = T.alloc_fragment((4, 64), T.float32)
        dst = T.alloc_fragment((4, 2), T.float32)
        for i, j in T.Parallel(4, 64):
            src[i, j] = A[i, j]
        view = T.reshape(src, (4, 2, 32))
        T.reduce_sum(view, dst, dim=2)
        for i, j in T.Parallel(4, 2):
            B[i, j] = dst[i, j]
        # the view is not read again, but its source changes under it: refused
        # (line 23, the first store after the view)
        for i, j in T.Parallel(4, 64):
            src[i, j] = 0.0  # <- R101
        for i, j in T.Parallel(4, 64):
            src[i, j] = A[i, j] * 2.0
