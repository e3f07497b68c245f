# expect: ok
# input: A=arange(0, 128)
# expect: result B=[120.0, 376.0, 632.0, 888.0, 1144.0, 1400.0, 1656.0, 1912.0]
#
# TVM's lower-case `T.parallel` loops, nested, are one parallel loop over both extents,
# as `T.Parallel(8, 16)` is (TileLang's layout inference takes a perfect nest of parallel
# loops as one); `T.parallel(0, n)` is `T.parallel(n)`. A perfect nest of `T.Parallel`
# loops folds the same way (the second loop).
import tilelang.language as T


@T.prim_func
def kernel(A: T.Tensor((8, 16), T.float32), B: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=128):
        s = T.alloc_fragment((8, 16), T.float32)
        d = T.alloc_fragment((8,), T.float32)
        for i in T.parallel(8):
            for j in T.parallel(0, 16):
                s[i, j] = A[i, j]
        for i in T.Parallel(8):
            for j in T.Parallel(16):
                s[i, j] = s[i, j] * 1.0
        T.reduce_sum(s, d, dim=1)
        T.copy(d, B)
