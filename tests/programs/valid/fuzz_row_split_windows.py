# expect: ok
#
# Fixed fuzz finding (regression test): nvcc crashed (a segmentation fault after two and a
# half minutes) on this valid program's canonical kernel. The two update loops cover parts
# of each row (k < 93, then k + 93 over k < 35): under the loop layouts the used cells of a
# thread are no prefix of its slots, so each loop read its iterations from a table, and
# the reducer slot and the a0_frag slot were known only at run time; the storage kept every
# output in every thread (neither loop's projection kept the other's contributions). Each
# access was a select over a whole register array, and unrolled over 256 slots a loop
# expanded into 98 K selects. Now (1) the cell inverse is the inverse of the row's full
# window, 64 x 128, with a guard on k (codegen.lower.cells.Window), (2) the storage is the
# projection widened to 8 replicas, which keeps both loops (codegen.storage.widened): every
# slot is a constant after unrolling and the kernel compiles in about a second; and (3) a
# cell loop that would still pass codegen.cuda_cells.SELECT_LIMIT is rendered rolled
# (histogram_rolled_loop.py). GPU fuzz campaign of 2026-12-01, seed 2031 case 405 (the
# stall of the fifth session's 600-program run); minimized. The unminimized case (three
# loops over a 128 x 128 tile) still crashes nvcc: docs/compiler-bugs/cicc-13.0-select-
# chain-crash.md.
import tilelang.language as T


@T.prim_func
def main(
    a0: T.Tensor((64, 128), T.int8),
    o0: T.Tensor((64,), T.int32),
):
    with T.Kernel(1, threads=32) as bx:
        a0_shared = T.alloc_shared((64, 128), T.int8)
        a0_frag = T.alloc_fragment((64, 128), T.int8)
        acc0 = T.alloc_reducer((64,), T.int32, op="sum")
        res0 = T.alloc_fragment((64,), T.int32)
        T.reducer_init(acc0)
        for ko in T.Pipelined(1, num_stages=2):
            T.copy(a0[bx * 64, ko * 128], a0_shared)
            T.copy(a0_shared, a0_frag)
            for i, k in T.Parallel(64, 93):
                T.reducer_update(acc0[i], T.cast(a0_frag[i, k], T.int32))
            for i, k in T.Parallel(64, 35):
                T.reducer_update(acc0[i], T.cast(a0_frag[i, k + 93], T.int32))
        T.finalize_reducer(acc0, res0)
        T.copy(res0, o0[bx * 64])
