# -*- coding: latin-1 -*-
# expect: ok
# input: x=[1, 2, 3, 4, 5, 6, 7, 8]
# expect: result out=[36.0]
#
# Declared Latin-1, with Latin-1 bytes in comments (café, µs): a UTF-8 reader
# cannot decode this file, Python reads it, and so does verify-reducer.
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

        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(total, result)
        T.copy(result, out)
