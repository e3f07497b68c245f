# expect: ok
#
# Regression (block independence): `k` appears only in the guard `i < k`, never in an
# index. With k in 0..63 each block writes y[64*bx .. 64*bx + 62] only, so the blocks are
# independent; the proof used to encode the guard after copying the range facts of the
# variables, so k's range was lost and block 0 seemed to write block 1's elements.
import tilelang.language as T

BLOCKS = 8
THREADS = 128


@T.prim_func
def main(w: T.Tensor((BLOCKS, 64), T.float32), x: T.Tensor((BLOCKS * 64,), T.float32),
         y: T.Tensor((BLOCKS * 64,), T.float32), out: T.Tensor((BLOCKS,), T.float32)):
    with T.Kernel(BLOCKS, threads=THREADS) as bx:
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for i in T.Parallel(64):
            T.reducer_update(acc[0], w[bx, i])
        T.finalize_reducer(acc)
        out[bx] = acc[0]
        for k in T.serial(64):
            for i in T.Parallel(THREADS):
                if i < k:
                    y[bx * 64 + i] = x[bx * 64 + i]
