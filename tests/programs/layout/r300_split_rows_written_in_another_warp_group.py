# expect: error R300 at 27:46
# expect: error R300 at 29:46
#
# The issue #12 split serial-row shape (two update loops per epoch read row `it` of x_frag
# at 12*i + k, then 12*i + k + 5) where no layout exists: warp group 0 writes x_frag in a
# T.Parallel, so exactly its threads (0..127) may hold each element (a holder that does
# not write would keep a stale replica), while both loops of warp group 1 read it on
# threads 128..255. Every root of the search is tried: with the writer first, both
# readers conflict; with a reader first, x_frag lands on warp group 1 and the writer
# conflicts. R300 names both demands: the reading loop and the writer that placed x_frag.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((3, 24), T.float32), out: T.Tensor((3, 2), T.float32)):
    with T.Kernel(1, threads=256) as bx:
        x_frag = T.alloc_fragment((3, 24), T.float32)
        acc = T.alloc_reducer((2,), T.float32, op="sum")
        result = T.alloc_fragment((2,), T.float32)
        with T.ws(0):
            for r, c in T.Parallel(3, 24):
                x_frag[r, c] = x[r, c] * 2.0
        with T.ws(1):
            for it in T.serial(3):
                T.reducer_init(acc)
                for i, k in T.Parallel(2, 5):
                    T.reducer_update(acc[i], x_frag[it, i * 12 + k])  # <- R300
                for i, k in T.Parallel(2, 7):
                    T.reducer_update(acc[i], x_frag[it, i * 12 + k + 5])  # <- R300
                T.finalize_reducer(acc, result)
                T.copy(result, out[it, 0:2])
