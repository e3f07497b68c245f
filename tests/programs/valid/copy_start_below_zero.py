# expect: ok
# input: x=arange(0, 64)
# expect: result out=[0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0]
#
# A copy whose start (a Let: `base`) is negative in block 0: the tile's first four
# elements lie before the tensor and read 0. The kernel must test `base + i >= 0`; a
# name the renderer knows nothing about may be negative (it once assumed otherwise and
# read x[-4..-1]).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((64,), T.float32), out: T.Tensor((64,), T.float32)):
    with T.Kernel(8, threads=128) as bx:
        a = T.alloc_fragment((8,), T.float32)
        base = bx * 8 - 4
        T.copy(x[base:base + 8], a)
        T.copy(a, out[bx * 8:bx * 8 + 8])
