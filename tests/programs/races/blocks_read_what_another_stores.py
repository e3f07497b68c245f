# expect: error R504 at 15
#
# Each block stores its row of X into Y[bx + 1] and reads Y[bx], which the block before
# it stores: what the read sees depends on whether that block has run yet (blocks of
# one launch run in no order). The store is reported, the read is the note.
import tilelang.language as T


@T.prim_func
def main(X: T.Tensor((4, 32), T.float32), Y: T.Tensor((5, 32), T.float32),
         Z: T.Tensor((4, 32), T.float32)):
    with T.Kernel(4, threads=32) as bx:
        for j in T.Parallel(32):
            Z[bx, j] = Y[bx, j]
            Y[bx + 1, j] = X[bx, j]  # <- R504
