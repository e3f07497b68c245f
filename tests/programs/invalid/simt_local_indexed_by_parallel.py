# expect: ok
# input: x=[1, 2, 3, 4, 5, 6, 7, 8]
# expect: result y=[16, 14, 12, 10, 8, 6, 4, 2]
#
# A T.Parallel that stores only to a thread-private buffer and touches no fragment is
# not spread over the threads (TileLang's lower_tile_op.cc: no fragment access, no
# non-local store): every thread runs every iteration and fills its whole copy of p, so
# thread t may then read p[7 - t], an element another thread would have owned had the
# loop been spread.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), y: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=32):
        t = T.get_thread_binding(0)
        p = T.alloc_local((8,), T.float32)
        for i in T.Parallel(8):
            p[i] = x[i] * 2.0
        if t < 8:
            y[t] = p[7 - t]
