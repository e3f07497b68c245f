# expect: error R504 at 17
#
# Every block adds its row into Out atomically, then reads Out back: another block's
# contributions may or may not have landed by then, so Seen holds whichever partial sum
# the read meets. The race is between two blocks (Z3 names the element and the blocks;
# verify/oracle/block_races.py); the atomic update is the note.
import tilelang.language as T


@T.prim_func
def main(X: T.Tensor((8, 32), T.float32), Out: T.Tensor((32,), T.float32),
         Seen: T.Tensor((8, 32), T.float32)):
    with T.Kernel(8, threads=32) as bx:
        for j in T.Parallel(32):
            T.atomic_add(Out[j], X[bx, j])
        for j in T.Parallel(32):
            Seen[bx, j] = Out[j]  # <- R504
