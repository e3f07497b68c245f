# expect: ok
# input: x=arange(0, 96)
# expect: result out=[[1.0, 5.0, 9.0, 13.0, 17.0, 21.0, 25.0, 29.0, 33.0, 37.0, 41.0, 45.0, 49.0, 53.0, 57.0, 61.0], [65.0, 69.0, 73.0, 77.0, 81.0, 85.0, 89.0, 93.0, 97.0, 101.0, 105.0, 109.0, 113.0, 117.0, 121.0, 125.0], [129.0, 133.0, 137.0, 141.0, 145.0, 149.0, 153.0, 157.0, 161.0, 165.0, 169.0, 173.0, 177.0, 181.0, 185.0, 189.0]]
#
# Serial rows read at a strided sum of loop variables: x_frag[it, 2*j + k] in a
# T.Parallel(16, 2) on 64 threads. The loop places x_frag through the inverse of the
# index (j = column // 2, k = column % 2): column c on the threads running (c // 2,
# c % 2), one slot per row. acc[j] sums the pair of columns 2j, 2j + 1 of row it:
# out[r, j] = 64*r + 4*j + 1.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((3, 32), T.float32), out: T.Tensor((3, 16), T.float32)):
    with T.Kernel(1, threads=64) as bx:
        x_frag = T.alloc_fragment((3, 32), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((16,), T.float32, op="sum")
        pairs = T.alloc_fragment((16,), T.float32)
        for it in T.serial(3):
            T.reducer_init(acc)
            for j, k in T.Parallel(16, 2):
                T.reducer_update(acc[j], x_frag[it, 2 * j + k])
            T.finalize_reducer(acc, pairs)
            T.copy(pairs, out[it, 0:16])
