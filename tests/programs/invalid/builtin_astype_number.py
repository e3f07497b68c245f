# expect: error R102 at 15
#
# `.astype` is a method of kernel values (TVM's PrimExpr); N is a Python int, which has
# none (TileLang fails with AttributeError). Write T.float32(N) or T.cast(N, T.float32).
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            y[j] = x[j].astype(T.float32) + \
                N.astype(T.float32)  # <- R102
