# expect: ok
# input: x=[[1.0, -1.0, 2.0, 0.5], [-2.0, 0.0, -0.0, 1e30], [1e-30, 3.0, 256.0, -256.0], [1e400, 1e-40, 0.001, 100.0]]
# expect: result hist=[[0, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0], [1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0], [1, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]]
# expect: result mid=[[2, 3, 4, 5], [3, 4, 5, 6], [4, 5, 6, 7], [5, 6, 7, 8]]
# expect: result flags=[0, 1, 1, 0]
#
# T.reinterpret reaching indices and guards (docs/semantics.md §8). The static checks
# read a float's bits as any value of the integer dtype, and a reinterpretation between
# integers as the conversion it is (two's complement, one width):
# - hist: each block's histogram of the top 4 bits (sign and 3 exponent bits) of its
#   row: `T.reinterpret(x, "uint32") >> 28` is 0..15 for every float, so the index is in
#   the reducer's shape (R209 proved from the uint32 range; one bit fewer is refused:
#   tests/programs/invalid/reinterpret_index_out_of_shape.py). By hand: 1.0 = 0x3F80...
#   -> 3, -1.0 = 0xBF8... -> 11, 2.0 = 0x4000... -> 4, 0.5 = 0x3F00... -> 3; -2.0 -> 12,
#   +0.0 -> 0, -0.0 -> 8, 1e30 = 0x7149F2CA -> 7; 1e-30 = 0x0DA24260 -> 0, 3.0 -> 4,
#   256 = 0x43800000 -> 4, -256 -> 12; +inf = 0x7F800000 -> 7, the subnormal 1e-40 -> 0,
#   0.001 = 0x3A83126F -> 3, 100 = 0x42C80000 -> 4.
# - mid: the unsigned range check `T.reinterpret(j - 2, "uint32") < 4` holds exactly for
#   2 <= j < 6 (j - 2 < 0 wraps past 2**31), which keeps `acc[j - 2]` inside (4,): Z3
#   proves it only by modelling the wrap. mid[bx] = [2, 3, 4, 5] + bx.
# - flags: the same check on the block index, `T.reinterpret(bx - 1, "uint32") < 2`,
#   true for blocks 1 and 2 (block 0 wraps to 2**32 - 1).
import tilelang.language as T

B = 4
N = 4


@T.prim_func
def main(x: T.Tensor((B, N), T.float32), hist: T.Tensor((B, 16), T.int32),
         mid: T.Tensor((B, 4), T.int32), flags: T.Tensor((B,), T.int32)):
    with T.Kernel(B, threads=32) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x[bx, 0], x_frag)
        h = T.alloc_reducer((16,), T.int32, op="sum")
        T.reducer_init(h)
        for j in T.Parallel(N):
            T.reducer_update(h[T.reinterpret(x_frag[j], "uint32") >> 28], 1)
        q = T.alloc_fragment((16,), T.int32)
        T.finalize_reducer(h, q)
        T.copy(q, hist[bx, 0])
        m = T.alloc_reducer((4,), T.int32, op="sum")
        T.reducer_init(m)
        for j in T.Parallel(8):
            if T.reinterpret(j - 2, "uint32") < 4:
                T.reducer_update(m[j - 2], j + bx)
        r = T.alloc_fragment((4,), T.int32)
        T.finalize_reducer(m, r)
        T.copy(r, mid[bx, 0])
        flags[bx] = T.if_then_else(T.reinterpret(bx - 1, "uint32") < 2, 1, 0)
