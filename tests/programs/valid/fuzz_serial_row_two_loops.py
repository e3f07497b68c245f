# expect: ok
# input: a0=[[4.0,1.0,2.0,4.0],[1.0,2.0,3.0,-2.0]]
# expect: result o0=[[11.0],[4.0]]
#
# Fixed fuzz finding (issue #12, regression test): this was a false R300 on a serial epoch whose row of a fragment
# is read by two T.Parallel loops (a0_frag[it, k], then a0_frag[it, k + 2]): each loop
# runs as thread = 2*rep + k and a0_frag keeps the layout its whole-tile T.copy gave it
# (thread = 8*rep + 4*i + j), which fits neither. The copy is free: a0_frag[r, c] on the
# threads = c mod 2 serves both loops. With one loop over the row, or with one epoch,
# the tool accepts it. Possibly the root cause of serial_row_sum_index.py (a row read
# at an index other than a plain loop variable), kept apart in case the fix covers only
# sums of loop variables. Fuzz seed 2 case 9 (also seed 1 cases 246 and 266, seed 2
# cases 77 and 125, seed 3 cases 49, 94, 124, 208 and 236), on one warp. o0 = row sums.
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((2, 4), T.float32),
    o0: T.Tensor((2, 1), T.float32),
):
    with T.Kernel(1, threads=32) as bx:
        a0_frag = T.alloc_fragment((2, 4), T.float32)
        acc0 = T.alloc_reducer((1,), T.float32, op="sum")
        res0 = T.alloc_fragment((1,), T.float32)
        T.copy(a0[bx * 2, 0], a0_frag)
        for it in T.serial(2):
            T.reducer_init(acc0)
            for k in T.Parallel(2):
                T.reducer_update(acc0[0], a0_frag[it, k])
            for k in T.Parallel(2):
                T.reducer_update(acc0[0], a0_frag[it, k + 2])
            T.finalize_reducer(acc0, res0)
            T.copy(res0, o0[(bx * 2) + it, 0:1])
