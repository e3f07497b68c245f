# expect: error R504 at 16
#
# Split-K without the atomic: every block adds its row of X into Out with a plain
# read-modify-write. Blocks of one launch run in no order, so two blocks can both read
# Out[j] before either stores it, and one block's row is lost. Running the blocks one
# after the other (as a sequential interpreter would) hides it; Z3's model over two
# blocks is the witness (verify/oracle/block_races.py). T.atomic_add is the fix
# (tests/programs/valid/atomic_add_split_rows.py).
import tilelang.language as T


@T.prim_func
def main(X: T.Tensor((4, 32), T.float32), Out: T.Tensor((32,), T.float32)):
    with T.Kernel(4, threads=32) as bx:
        for j in T.Parallel(32):
            Out[j] = Out[j] + X[bx, j]  # <- R504
