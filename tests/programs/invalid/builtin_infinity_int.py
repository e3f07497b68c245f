# expect: error R102 at 14
#
# T.infinity has no integer form: TileLang's tl.infinity stops with "Cannot decide
# infinity for type int32". T.max_value(T.int32) is the largest int32.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.int32), y: T.Tensor((N,), T.int32)):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            y[j] = T.min(x[j], T.infinity(T.int32))  # <- R102
