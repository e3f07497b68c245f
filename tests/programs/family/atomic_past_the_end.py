# expect: error R220 at 19
# for-all: N in 1..64
#
# Split-K into `out` with no tail test on the atomic: at the file's N = 32 every column
# of the 32-wide tile exists, but for N < 32 the atomic adds past the end of `out`. The
# family proof reads an atomic's index as a write (verify/family/proofs.py), so the
# smallest counterexample N = 1 is found; the reads of `x` stay inside it for every N.
import tilelang.language as T

N = 32
ROWS = 4
TILE = 32


@T.prim_func
def main(x: T.Tensor((ROWS, TILE), T.float32), out: T.Tensor((N,), T.float32)):
    with T.Kernel(ROWS, threads=32) as bx:
        for j in T.Parallel(TILE):
            T.atomic_add(out[j], x[bx, j])  # <- R220
