# expect: ok
# input: x=arange(0, 64)
# expect: result s=[28.0, 92.0, 156.0, 220.0, 284.0, 348.0, 412.0, 476.0]
# expect: result m=[7.0, 15.0, 23.0, 31.0, 39.0, 47.0, 55.0, 63.0]
# expect: result a=[28.0, 92.0, 156.0, 220.0, 284.0, 348.0, 412.0, 476.0]
#
# A tile reduction of a shared tile (TileLang's test_tilelang_language_reduce.py,
# src_scope="shared"): read in place by every holder of an output, after a barrier;
# into a fragment, into a shared buffer, and in a serial loop that refills the tile
# (each refill must wait for the previous reduction's readers).
import tilelang.language as T

R = 8
C = 8


@T.prim_func
def main(
    x: T.Tensor((R, C), T.float32),
    s: T.Tensor((R,), T.float32),
    m: T.Tensor((R,), T.float32),
    a: T.Tensor((R,), T.float32),
):
    with T.Kernel(1, threads=64) as bx:
        p = T.alloc_shared((R, C), T.float32)
        T.copy(x, p)
        rs = T.alloc_fragment((R,), T.float32)
        T.reduce_sum(p, rs, dim=1, batch=2)
        T.copy(rs, s)
        rm = T.alloc_shared((R,), T.float32)
        T.reduce_max(p, rm, dim=1)
        T.copy(rm, m)
        half = T.alloc_shared((R // 2, C), T.float32)
        ra = T.alloc_fragment((R // 2,), T.float32)
        for k in T.serial(2):
            T.copy(x[k * (R // 2), 0], half)
            T.reduce_abssum(half, ra, 1)
            T.copy(ra, a[k * (R // 2)])
