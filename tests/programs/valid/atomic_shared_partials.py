# expect: ok
# input: A=arange(0, 256)
# expect: result C=[2016.0, 6112.0, 10208.0, 14304.0]
#
# The split-K GEMV pattern of TileLang's examples/gemv, shrunk: each thread (tn, tk)
# sums its K-slice into a private accumulator and adds it atomically into a shared
# element, which thread tk == 0 zeroed first; the plan fences the atomic before (the
# zeroing is visible) and after (every contribution is in before the read).
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((4, 64), T.float32), C: T.Tensor((4,), T.float32)):
    with T.Kernel(1, threads=(4, 8)) as bx:
        tn = T.get_thread_binding(0)
        tk = T.get_thread_binding(1)
        acc = T.alloc_local((1,), T.float32)
        part = T.alloc_shared((4,), T.float32)
        if tk == 0:
            part[tn] = 0
        T.clear(acc)
        for k in T.serial(8):
            acc[0] += A[tn, tk * 8 + k]
        T.atomic_add(part[tn], acc[0])
        C[tn] = part[tn]
