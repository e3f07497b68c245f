# -*- coding: utf-7 -*-
# expect: ok
# input: x=[1, 2, 3, 4, 5, 6, 7, 8]
# expect: result out=[72.0]
#
# Issue 24: the file declares UTF-7, where a plus sign, AAo and a dash spell a newline
# (the comment under the update has them). Read as UTF-8 that line is one comment and
# the sum is 36; Python (and so TileLang, and `run --backend tilelang`) reads it as UTF-7:
# a comment, a newline, then a second update, and the sum is 72. verify-reducer reads
# the file as Python does (spec.source.decode_source), so what it verifies is what runs.
import tilelang.language as T

BD = 8
THREADS = 128


@T.prim_func
def main(x: T.Tensor((BD,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=THREADS) as bx:
        x_frag = T.alloc_fragment((BD,), T.float32)
        T.copy(x, x_frag)

        total = T.alloc_reducer((1,), T.float32, op="sum")
        for j in T.Parallel(BD):
            T.reducer_update(total, (0,), x_frag[j])
            # a comment +AAo-            T.reducer_update(total, (0,), x_frag[j])

        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(total, result)
        T.copy(result, out)
