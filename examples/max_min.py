# expect: ok
# input: x=[[3, -1, 4, -1, 5, -9, 2, 6], [-5, -3, -5, -8, -9, -7, -9, -3], [2, 7, 1, 8, 2, 8, 1, 8], [0, 0, 0, 0, 0, 0, 0, 0]]
# expect: result row_max=[6.0, -3.0, 8.0, 0.0]
# expect: result row_min=[-9.0, -9.0, 1.0, 0.0]
# expect: result row_absmax=[9.0, 9.0, 8.0, 0.0]
#
# max and min reducers over a 2-D tile, one output per row: identities are -inf and +inf,
# so an all-negative row still gets its true maximum (a zero fill would have returned 0).
# abs-max is a max reducer fed T.abs(value): abs transforms the contribution, it is not
# a separate combine op. T.Parallel(4, 8) = 32 iterations on 128 threads: 4 replicas.
import tilelang.language as T

ROWS = 4
COLS = 8
THREADS = 128


@T.prim_func
def main(
    x: T.Tensor((ROWS, COLS), T.float32),
    row_max: T.Tensor((ROWS,), T.float32),
    row_min: T.Tensor((ROWS,), T.float32),
    row_absmax: T.Tensor((ROWS,), T.float32),
):
    with T.Kernel(1, threads=THREADS) as bx:
        x_frag = T.alloc_fragment((ROWS, COLS), T.float32)
        T.copy(x, x_frag)

        mx = T.alloc_reducer((ROWS,), T.float32, op="max")
        mn = T.alloc_reducer((ROWS,), T.float32, op="min")
        amx = T.alloc_reducer((ROWS,), T.float32, op="max")
        T.reducer_init(mx)
        T.reducer_init(mn)
        T.reducer_init(amx)
        for i, j in T.Parallel(ROWS, COLS):
            T.reducer_update(mx[i], x_frag[i, j])
            T.reducer_update(mn[i], x_frag[i, j])
            T.reducer_update(amx[i], T.abs(x_frag[i, j]))

        mx_frag = T.alloc_fragment((ROWS,), T.float32)
        mn_frag = T.alloc_fragment((ROWS,), T.float32)
        amx_frag = T.alloc_fragment((ROWS,), T.float32)
        T.finalize_reducer(mx, mx_frag)
        T.finalize_reducer(mn, mn_frag)
        T.finalize_reducer(amx, amx_frag)
        T.copy(mx_frag, row_max)
        T.copy(mn_frag, row_min)
        T.copy(amx_frag, row_absmax)
