# expect: error R100 at 12
#
# `return_prev=True` makes TileLang's atomic an expression (the previous value); here an
# atomic is a statement, and the flag is refused by name.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((32,), T.int32), y: T.Tensor((1,), T.int32)):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(32):
            T.atomic_add(y[0], x[j], return_prev=True)  # <- R100
