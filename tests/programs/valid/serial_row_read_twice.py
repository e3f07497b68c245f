# expect: ok
# input: x=arange(0, 48)
# expect: result out=[240.0, 752.0, 1264.0]
#
# Serial rows where two iterations read each element: x_frag[it, j // 2] in a
# T.Parallel(32) on 64 threads. The low digit of j does not reach the index, so it
# replicates: column c lives on the threads running j = 2c and j = 2c + 1 (four
# threads, one slot per row). Each row is summed twice: out[r] = 512*r + 240.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((3, 16), T.float32), out: T.Tensor((3,), T.float32)):
    with T.Kernel(1, threads=64) as bx:
        x_frag = T.alloc_fragment((3, 16), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        for it in T.serial(3):
            T.reducer_init(acc)
            for j in T.Parallel(32):
                T.reducer_update(acc[0], x_frag[it, j // 2])
            T.finalize_reducer(acc, result)
            out[it] = result[0]
