# expect: ok
# input: x=arange(0, 8)
# expect: result s=[6.0, 22.0]
#
# T.reshape makes a view (a second shape over the same elements, row-major): f2[i, j]
# is f[4 * i + j], read as a copy made at the reshape (nothing writes f after it).
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), s: T.Tensor((2,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        f = T.alloc_fragment((N,), T.float32)
        T.copy(x, f)
        r = T.alloc_fragment((2,), T.float32)
        f2 = T.reshape(f, (2, 4))
        T.reduce_sum(f2, r, dim=1)
        T.copy(r, s)
