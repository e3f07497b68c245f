# expect: ok
#
# Each of 128 threads holds 320 float32 elements of x_frag in registers (its layout gives
# every thread a row): with the partials and the kernel's own indices that is over the
# 255 registers a thread can have, so the plan carries an R506 *warning* (ptxas puts
# the array in local memory or spills; the kernel is still correct). The program
# verifies: a warning never rejects.
import tilelang.language as T

ROWS = 128
COLS = 320


@T.prim_func
def main(x: T.Tensor((ROWS, COLS), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((ROWS, COLS), T.float32)
        T.copy(x, x_frag)
        total = T.alloc_reducer((1,), T.float32, op="sum")
        for i, j in T.Parallel(ROWS, COLS):
            T.reducer_update(total, (0,), x_frag[i, j])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(total, result)
        T.copy(result, out)
