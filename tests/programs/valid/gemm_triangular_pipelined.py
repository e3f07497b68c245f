# expect: ok
#
# A block-triangular GEMM, the loop shape of a causal attention: block bx of C's rows
# sums the K tiles 0..bx only, `T.Pipelined(T.min(4, bx + 1), num_stages=2)`. The loop's
# stop is read at run time from the block index; bounded over the grid (k < 4), the
# loop is still a 2-stage cp.async pipeline, every issue guarded against the stop
# (block 0 runs one iteration and issues no second tile), and the copies need no
# border guard.
import tilelang.language as T


@T.prim_func
def main(a: T.Tensor((128, 128), T.float16), b: T.Tensor((128, 64), T.float16),
         c: T.Tensor((128, 64), T.float32)):
    with T.Kernel(4, threads=128) as bx:
        a_s = T.alloc_shared((32, 32), T.float16)
        b_s = T.alloc_shared((32, 64), T.float16)
        acc = T.alloc_fragment((32, 64), T.float32)
        T.clear(acc)
        for k in T.Pipelined(T.min(4, bx + 1), num_stages=2):
            T.copy(a[bx * 32, k * 32], a_s)
            T.copy(b[k * 32, 0], b_s)
            T.gemm(a_s, b_s, acc)
        T.copy(acc, c[bx * 32, 0])
