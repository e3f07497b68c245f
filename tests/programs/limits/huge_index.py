# expect: error R102 at 13:18
# expect: error R102 at 14:27
#
# Indices and loop bounds are int32: a constant beyond it is an error, not a wrapped
# index or a loop that starts somewhere else.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        r = T.alloc_fragment((8,), T.float32)
        x[0] = r[2**63]
        for i in T.serial(2**40, 2**40 + 4):
            x[0] = 1.0
