# expect: ok
# input: x=[[3, -1, 4, -1, 5, -9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3], [-5, -3, -5, -8, -9, -7, -9, -3, -4, -6, -2, -6, -4, -3, -3, -8], [2, 7, 1, 8, 2, 8, 1, 8, 2, 8, 4, 5, 9, 0, 4, 5], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]
# expect: result arg=[12, 10, 12, 0]
# expect: result best=[9, -2, 9, 0]
#
# A row-wise argmax with a user-declared reducer op. Each contribution packs its value
# into the high 32 bits of an int64 and its column into the low 32 bits; argmax_packed
# keeps the larger value and, on a tie, the smaller column, so the result does not depend
# on which thread saw which column. check proves the op lawful on 64-bit vectors (its
# identity on both sides, associativity, commutativity) before anything runs; the
# interpreter, the simulator and the CUDA kernel all combine with this one declaration.
import tilelang.language as T

ROWS = 4
COLS = 16
THREADS = 128
LOW = 0xFFFFFFFF
# the least value with the greatest column: loses against every packed pair
IDENTITY = -(2 ** 63) + LOW


@T.reducer_op(dtype=T.int64, identity=IDENTITY)
def argmax_packed(a, b):
    """The larger value (high bits); on a tie, the smaller column (low bits)."""
    return T.if_then_else(
        a >> 32 > b >> 32 or (a >> 32 == b >> 32 and (a & LOW) <= (b & LOW)), a, b)


@T.prim_func
def main(
    x: T.Tensor((ROWS, COLS), T.int32),
    arg: T.Tensor((ROWS,), T.int32),
    best: T.Tensor((ROWS,), T.int32),
):
    with T.Kernel(1, threads=THREADS) as bx:
        x_frag = T.alloc_fragment((ROWS, COLS), T.int32)
        T.copy(x, x_frag)

        acc = T.alloc_reducer((ROWS,), T.int64, op=argmax_packed)
        T.reducer_init(acc)
        for i, j in T.Parallel(ROWS, COLS):
            T.reducer_update(acc[i], (T.cast(x_frag[i, j], T.int64) << 32) | T.cast(j, T.int64))
        packed = T.alloc_fragment((ROWS,), T.int64)
        T.finalize_reducer(acc, packed)

        arg_frag = T.alloc_fragment((ROWS,), T.int32)
        best_frag = T.alloc_fragment((ROWS,), T.int32)
        for i in T.Parallel(ROWS):
            arg_frag[i] = T.cast(packed[i] & LOW, T.int32)
            best_frag[i] = T.cast(packed[i] >> 32, T.int32)
        T.copy(arg_frag, arg)
        T.copy(best_frag, best)
