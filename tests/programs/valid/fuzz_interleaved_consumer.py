# expect: ok
# input: a0=[[4.0,1.0],[2.0,4.0]]
# input: a1=[[1.0,2.0],[3.0,-2.0]]
# expect: result o0=[4.0,4.0]
# expect: result o1=[-3.0,-6.0]
#
# Fixed fuzz finding (issue #12, regression test): this was a false R300 on a consumer that reads its producer's
# result in a flat loop, a1_frag[k % 2, k // 2] - res0[k % 2]: the loop follows res0
# (threads = 2*rep + k % 2) while a1_frag keeps the layout its whole-tile T.copy gave it
# (thread = 4*rep + 2*i + j), so iteration k=1 finds no thread holding both. A layout
# exists: the copy is free and can place a1_frag[r, c] on the threads of res0[r]. Also
# without the first reducer (res0 copied from global). Fuzz seed 1 case 119 and seed 3
# case 156 (3x3; seed 1 case 3 of the generator before 2-D reducers), 2x2 here on one
# warp. o0 = row max of a0, o1 = row min of a1 - o0.
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((2, 2), T.float32),
    a1: T.Tensor((2, 2), T.float32),
    o0: T.Tensor((2,), T.float32),
    o1: T.Tensor((2,), T.float32),
):
    with T.Kernel(1, threads=32) as bx:
        a0_frag = T.alloc_fragment((2, 2), T.float32)
        acc0 = T.alloc_reducer((2,), T.float32, op="max")
        res0 = T.alloc_fragment((2,), T.float32)
        T.reducer_init(acc0)
        T.copy(a0[bx * 2, 0], a0_frag)
        for k in T.Parallel(4):
            T.reducer_update(acc0[k % 2], a0_frag[k % 2, k // 2])
        T.finalize_reducer(acc0, res0)
        T.copy(res0, o0[bx * 2])
        a1_frag = T.alloc_fragment((2, 2), T.float32)
        acc1 = T.alloc_reducer((2,), T.float32, op="min")
        res1 = T.alloc_fragment((2,), T.float32)
        T.reducer_init(acc1)
        T.copy(a1[bx * 2, 0], a1_frag)
        for k in T.Parallel(4):
            T.reducer_update(acc1[k % 2], a1_frag[k % 2, k // 2] - res0[k % 2])
        T.finalize_reducer(acc1, res1)
        T.copy(res1, o1[bx * 2])
