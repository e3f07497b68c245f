# expect: error R100 at 16
#
# `return_prev=True` makes TileLang's atomic an expression: the value y[0] held when this
# update landed, which depends on the order the 32 contributions land in (a ticket:
# 0, x[a], x[a] + x[b], ... in whichever order the lanes win). Outputs are judged by one
# meaning for every order, and this value has none: refused with the reason
# (docs/semantics.md §12), never run under one guessed order. As a statement, with the
# value dropped, the same call is an ordinary atomic.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((32,), T.int32), y: T.Tensor((1,), T.int32), p: T.Tensor((32,), T.int32)):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(32):
            p[j] = T.atomic_add(y[0], x[j], return_prev=True)  # <- R100
