# expect: ok
# input: x=[[2, 0.5, 4, -1, 8, 0.25, 1, -2], [1.5, 2, -1, 1, 1, 1, 1, 1]]
# expect: result out=[16.0, -3.0]
#
# A product reducer (identity 1): one output per row. Products of powers of two are exact,
# so the result does not depend on the combination order. Product is not idempotent: a
# contribution counted twice squares it (with 16 replicas of T.Parallel(2, 8) on 256
# threads, the old lowering would have raised each row product to the 16th power).
import tilelang.language as T

ROWS = 2
COLS = 8
THREADS = 256


@T.prim_func
def main(x: T.Tensor((ROWS, COLS), T.float32), out: T.Tensor((ROWS,), T.float32)):
    with T.Kernel(1, threads=THREADS) as bx:
        x_frag = T.alloc_fragment((ROWS, COLS), T.float32)
        T.copy(x, x_frag)

        prod = T.alloc_reducer((ROWS,), T.float32, op="product")
        T.reducer_init(prod)
        for i, j in T.Parallel(ROWS, COLS):
            T.reducer_update(prod[i], x_frag[i, j])

        result = T.alloc_fragment((ROWS,), T.float32)
        T.finalize_reducer(prod, result)
        T.copy(result, out)
