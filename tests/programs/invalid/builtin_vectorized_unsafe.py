# expect: error R100 at 21
# expect: error R100 at 23
#
# A T.vectorized loop means its iterations in order, but TVM's vectorizer turns each
# store into one vector statement without checking for a carried dependence: reading
# p[k - 1], which the previous iteration wrote, has two meanings, so it is refused
# (use T.serial). A tile op in its body is refused too (only element stores and
# bindings vectorize).
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        p = T.alloc_shared((N,), T.float32)
        T.copy(x, p)
        for k in T.vectorized(1, N):
            p[k] = \
                p[k - 1] + x[k]  # <- R100
        for k in T.vectorized(2):
            T.copy(p, y)  # <- R100
