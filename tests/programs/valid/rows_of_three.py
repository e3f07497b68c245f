# expect: ok
# input: A=arange(0, 12)
# input: x=arange(1, 10)
# expect: result out=[3.0, 12.0, 21.0, 30.0, 44.0]
#
# Copies through shared memory that must stay scalar: rows of 3 floats (12 bytes, no
# 16-byte run fits a row) and a run-shaped copy of 8 floats from element 1 of x (runs of
# 4 floats, but at element offsets 1 and 5: not 16-byte aligned). out[r] is the sum of
# row r of A, out[4] the sum of x[1:9] = 2 + ... + 9.
import tilelang.language as T


@T.prim_func
def main(
    A: T.Tensor((4, 3), T.float32),
    x: T.Tensor((9,), T.float32),
    out: T.Tensor((5,), T.float32),
):
    with T.Kernel(1, threads=32) as bx:
        A_shared = T.alloc_shared((4, 3), T.float32)
        x_shared = T.alloc_shared((8,), T.float32)
        T.copy(A, A_shared)
        T.copy(x[1], x_shared)
        rows = T.alloc_reducer((5,), T.float32, op="sum")
        T.reducer_init(rows)
        for r, c in T.Parallel(4, 3):
            T.reducer_update(rows[r], A_shared[r, c])
        for j in T.Parallel(8):
            T.reducer_update(rows[4], x_shared[j])
        res = T.alloc_fragment((5,), T.float32)
        T.finalize_reducer(rows, res)
        T.copy(res, out)
