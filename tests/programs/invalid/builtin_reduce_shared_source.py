# expect: error R100 at 18
#
# TileLang also reduces a shared buffer; our simulator and CUDA renderer read a tile
# reduction's source from its fragment registers, so the source must be a fragment:
# T.copy the shared tile into a T.alloc_fragment first.
import tilelang.language as T

R = 4
C = 8


@T.prim_func
def main(x: T.Tensor((R, C), T.float32), s: T.Tensor((R,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        p = T.alloc_shared((R, C), T.float32)
        T.copy(x, p)
        rs = T.alloc_fragment((R,), T.float32)
        T.reduce_sum(p, rs, dim=1)  # <- R100
        T.copy(rs, s)
