# expect: ok
# input: x=[1, 2, 3, 4, 5, 6, 7, 8]
# expect: result y=[10, 28, 54, 88, 130, 180, 238, 304]
#
# T.alloc_local is thread-private: each of the 8 threads keeps its own acc[0] (SIMT
# style, as TileLang's gemv examples write it). T.clear at block level sets every
# thread's copy; `acc[0] += ...` reads the thread's own copy, so it runs once per thread.
# y[t] = sum over k < 4 of x[t] * (t + k + 1) = x[t] * (4t + 10), x[t] = t + 1.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), y: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=(4, 2)):
        t = T.get_thread_binding(0) + 4 * T.get_thread_binding(1)
        acc = T.alloc_local((1,), T.float32)
        T.clear(acc)
        for k in T.serial(4):
            acc[0] += x[t] * T.cast(t + k + 1, T.float32)
        y[t] = acc[0]
