# expect: ok
# input: x=[[1, -2, 3, -4, 5, -6, 7, -8], [0, 0, 0, 0, 0, 0, 0, -1], [2, 2, 2, 2, 2, 2, 2, 2], [-3, 1, -4, 1, -5, 9, -2, 6]]
# expect: result s=[-4.0, -1.0, 16.0, 3.0]
# expect: result m=[7.0, 0.0, 2.0, 9.0]
# expect: result a=[36.0, 1.0, 16.0, 31.0]
#
# Closed tile reductions without reducers: T.reduce_sum / T.reduce_max / T.reduce_abssum
# over dim 1 of a fragment. Each is its own collective; no epoch is involved.
import tilelang.language as T

R = 4
C = 8


@T.prim_func
def main(
    x: T.Tensor((R, C), T.float32),
    s: T.Tensor((R,), T.float32),
    m: T.Tensor((R,), T.float32),
    a: T.Tensor((R,), T.float32),
):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((R, C), T.float32)
        s_frag = T.alloc_fragment((R,), T.float32)
        m_frag = T.alloc_fragment((R,), T.float32)
        a_frag = T.alloc_fragment((R,), T.float32)
        T.copy(x, x_frag)
        T.reduce_sum(x_frag, s_frag, dim=1)
        T.reduce_max(x_frag, m_frag, dim=1)
        T.reduce_abssum(x_frag, a_frag, dim=1)
        T.copy(s_frag, s)
        T.copy(m_frag, m)
        T.copy(a_frag, a)
