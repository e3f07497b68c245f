# expect: ok
# input: x=arange(0, 512)
# expect: result pooled=[[792.0, 856.0, 920.0, 984.0, 1048.0, 1112.0, 1176.0, 1240.0], [2840.0, 2904.0, 2968.0, 3032.0, 3096.0, 3160.0, 3224.0, 3288.0], [4888.0, 4952.0, 5016.0, 5080.0, 5144.0, 5208.0, 5272.0, 5336.0], [6936.0, 7000.0, 7064.0, 7128.0, 7192.0, 7256.0, 7320.0, 7384.0]]
#
# A 2-D reducer: 4x4 sum pooling of a 16x32 tile into a 4x8 reducer. The logical output
# index is an expression of the loop variables (r // 4, c // 4); 16 iterations feed each
# output. T.Parallel(16, 32) = 512 iterations on 128 threads, 4 slots per thread, so the
# 16 contributions of one output are spread over several threads and slots.
import tilelang.language as T

H = 16
W = 32
POOL = 4
THREADS = 128


@T.prim_func
def main(
    x: T.Tensor((H, W), T.float32),
    pooled: T.Tensor((H // POOL, W // POOL), T.float32),
):
    with T.Kernel(1, threads=THREADS) as bx:
        x_frag = T.alloc_fragment((H, W), T.float32)
        T.copy(x, x_frag)

        acc = T.alloc_reducer((H // POOL, W // POOL), T.float32, op="sum")
        T.reducer_init(acc)
        for r, c in T.Parallel(H, W):
            T.reducer_update(acc[r // POOL, c // POOL], x_frag[r, c])

        result = T.alloc_fragment((H // POOL, W // POOL), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, pooled)
