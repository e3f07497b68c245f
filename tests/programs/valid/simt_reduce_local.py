# expect: ok
# input: x=[1, -7, 3, 2, 5, 0, -1, 4, 6, 8, -2, 1, 0, 3, 9, -4, 2, 2, 7, -5, 1, 6, -3, 0]
# expect: result s=[3, -2, 3, 3, 7, 2, 7, 6, -4, 5, 11, 9, 13, -8, 1, 7]
# expect: result m=[5, 8, 9, 7]
#
# T.reduce_* of a thread-private source into a thread-private destination: each of the
# 4 threads reduces its own copy of p (2 x 3, x[6t .. 6t + 5]), as TileLang lowers it
# (src/backend/common/op/reduce.h, LowerLocal): cols = p summed over dim 0, rows = the
# max over dim 1, best (a T.alloc_var) = the max of rows. s[4t .. 4t + 2] = cols,
# s[4t + 3] = |rows[0]|, m[t] = best. Thread 0: p = [[1, -7, 3], [2, 5, 0]], cols =
# [3, -2, 3], rows = [3, 5], best = 5.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((24,), T.int32), s: T.Tensor((16,), T.int32),
         m: T.Tensor((4,), T.int32)):
    with T.Kernel(1, threads=4):
        t = T.get_thread_binding(0)
        p = T.alloc_local((2, 3), T.int32)
        for i in T.serial(2):
            for j in T.serial(3):
                p[i, j] = x[6 * t + 3 * i + j]
        cols = T.alloc_local((3,), T.int32)
        T.reduce_sum(p, cols, dim=0)
        rows = T.alloc_local((2,), T.int32)
        T.reduce_max(p, rows, dim=1)
        best = T.alloc_var(T.int32)
        T.reduce_max(rows, best, dim=0)
        for j in T.serial(3):
            s[4 * t + j] = cols[j]
        s[4 * t + 3] = T.abs(rows[0])
        m[t] = best
