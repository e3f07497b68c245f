# expect: error R100 at 20
#
# TileLang reduces a local (per-thread) source only into a local destination: each
# thread over its own copy (src/backend/common/op/reduce.h, LowerLocal). Into a
# fragment it is refused by name, at the destination. Reduce a fragment (or a shared
# tile) into a fragment instead, or a local into a local.
import tilelang.language as T

R = 4
C = 8


@T.prim_func
def main(x: T.Tensor((R, C), T.float32), s: T.Tensor((R,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        p = T.alloc_local((R, C), T.float32)
        for e in T.serial(R * C):
            p[e // C, e % C] = x[e // C, e % C]
        rs = T.alloc_fragment((R,), T.float32)
        T.reduce_sum(p, rs, dim=1)  # <- R100
        T.copy(rs, s)
