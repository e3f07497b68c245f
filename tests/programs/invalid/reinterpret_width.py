# expect: error R102 at 17
#
# T.reinterpret reads a value's bits as another dtype of the same width: a float32 has
# 32 bits and a uint16 16, so there is no such reading (TVM stops with "Reinterpret
# requires size match"). Convert first (T.cast) or reinterpret as uint32.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), y: T.Tensor((N,), T.uint16)):
    with T.Kernel(1, threads=32) as bx:
        for j in T.Parallel(N):
            # a float32 read as 16 bits
            y[j] = (
                T.reinterpret(x[j], "uint16")  # <- R102
            )
