# expect: ok
# input: x=arange(-16, 16)
# expect: result s=[-100.0, -36.0, 28.0, 92.0]
# expect: result a=[100.0, 36.0, 28.0, 92.0]
# expect: result mx=[-9.0, -1.0, 7.0, 15.0]
#
# `batch=` of T.reduce_* is TileLang's code-generation hint (how many outputs share one
# all-reduce's barriers; language/reduce_op.py): the values are those of the unbatched
# reduction. reduce_abssum takes it as its fourth positional argument (it has no
# `clear`), the others after `clear`. nan_propagate=False is the default (NaN terms are
# ignored, as our max/min does); True into float32 is the same (TileLang's __hmax_nan
# is for float16/bfloat16 destinations only, refused: builtin_reduce_nan_propagate.py).
import tilelang.language as T

R = 4
C = 8


@T.prim_func
def main(
    x: T.Tensor((R, C), T.float32),
    s: T.Tensor((R,), T.float32),
    a: T.Tensor((R,), T.float32),
    mx: T.Tensor((R,), T.float32),
):
    with T.Kernel(1, threads=32) as bx:
        f = T.alloc_fragment((R, C), T.float32)
        T.copy(x, f)
        rs = T.alloc_fragment((R,), T.float32)
        ra = T.alloc_fragment((R,), T.float32)
        rm = T.alloc_fragment((R,), T.float32)
        T.reduce_sum(f, rs, dim=1, batch=4)
        T.reduce_abssum(f, ra, 1, 2)
        T.reduce_max(f, rm, 1, True, 1, nan_propagate=True)
        T.copy(rs, s)
        T.copy(ra, a)
        T.copy(rm, mx)
