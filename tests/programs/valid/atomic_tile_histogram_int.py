# expect: ok
# input: X=arange(0, 128)
# input: Hist=[0, 0, 0, 0, 0, 0, 0, 0]
# input: Hi=[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
# input: Lo=[1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000]
# expect: result Hist=[16, 16, 16, 16, 16, 16, 16, 16]
# expect: result Hi=[112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127]
# expect: result Lo=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
#
# Integer atomics are exact in any order. Every thread of every block counts its value
# into one of 8 bins (the element form outside a T.Parallel: each thread that reaches it
# is one contribution, as TileLang's CUDA runs it); the tile form
# `T.atomic_max(Hi[0:16], tile)` is a T.Parallel of element atomics over the regions, as
# TileLang lowers it; atomic_min takes its memory_order as written.
import tilelang.language as T


@T.prim_func
def main(X: T.Tensor((8, 16), T.int32), Hist: T.Tensor((8,), T.int32),
         Hi: T.Tensor((16,), T.int32), Lo: T.Tensor((16,), T.int32)):
    with T.Kernel(8, threads=16) as bx:
        tx = T.get_thread_binding()
        T.atomic_add(Hist[X[bx, tx] % 8], 1)
        tile = T.alloc_shared((16,), T.int32)
        T.copy(X[bx, 0:16], tile)
        T.atomic_max(Hi[0:16], tile)
        for j in T.Parallel(16):
            T.atomic_min(Lo[j], tile[j], memory_order="seq_cst")
