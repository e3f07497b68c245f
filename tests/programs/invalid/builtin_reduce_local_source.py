# expect: error R100 at 19
#
# TileLang also reduces a local (per-thread) buffer; our simulator and CUDA renderer
# read a tile reduction's source from a fragment's registers or a shared tile, so a
# local source is refused by name. Reduce a fragment (or a shared tile) instead.
import tilelang.language as T

R = 4
C = 8


@T.prim_func
def main(x: T.Tensor((R, C), T.float32), s: T.Tensor((R,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        p = T.alloc_local((R, C), T.float32)
        for i, j in T.Parallel(R, C):
            p[i, j] = x[i, j]
        rs = T.alloc_fragment((R,), T.float32)
        T.reduce_sum(p, rs, dim=1)  # <- R100
        T.copy(rs, s)
