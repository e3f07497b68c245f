# expect: ok
# input: x=[16777216.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
# input: big=[1e400]
# input: zero=[0.0]
# expect: result s=[16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0, 16777246.0]
# expect: result m=[-1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0]
#
# T.warp_reduce_sum is tl::warp_reduce's butterfly (lane masks 16, 8, 4, 2, 1), each step
# rounded to float32: with x[0] = 2**24 and 1 elsewhere, lane 0's first step 2**24 + 1
# rounds back to 2**24 (ties to even), then it adds 2, 4, 8 and 16: every lane ends with
# 16777246, where the exact sum 2**24 + 31 rounds to 16777248 — the order is part of the
# meaning, and the GPU's.
# T.warp_reduce_max is fmaxf's: NaN terms (inf * 0 on all lanes but 7 and 30) are
# ignored, so the max of -2.5 and -1 is -1 on every lane. Both factors of the NaN are
# loads, so TVM's simplifier cannot fold `x * 0.0` to 0 as it folds `x - x` (the H200
# run of 2026-12-03 failed TileLang's run of the literal-zero form; its message was lost
# with a hung shard, and this is the one difference we know TVM makes here).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((32,), T.float32), big: T.Tensor((1,), T.float32),
         zero: T.Tensor((1,), T.float32),
         s: T.Tensor((32,), T.float32), m: T.Tensor((32,), T.float32)):
    with T.Kernel(1, threads=32):
        t = T.get_thread_binding(0)
        s[t] = T.warp_reduce_sum(x[t])
        m[t] = T.warp_reduce_max(T.if_then_else(t == 7, T.float32(-2.5),
                                 T.if_then_else(t == 30, T.float32(-1.0), big[0] * zero[0])))
