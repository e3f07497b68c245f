# expect: ok
# input: x=[1, 2, 3, 4, 5, 6, 7, 8]
# expect: result y=[2.5, 9, 22.5, 46, 82.5, 135, 206.5, 300]
#
# T.alloc_var (tilelang/language/allocate.py): a thread-private scalar; its name reads
# it, `v = x` and `v += x` store it, a second argument initializes it. Each thread t
# sums x[0..t] into its own s (from 1.5) and counts into its own n:
# y[t] = (1.5 + (t+1)(t+2)/2) * (t + 1).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), y: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=8):
        t = T.get_thread_binding(0)
        s = T.alloc_var(T.float32, 1.5)
        n = T.alloc_var(T.int32)
        n = 0
        for k in T.serial(t + 1):
            s += x[k]
            n += 1
        y[t] = s * T.cast(n, T.float32)
