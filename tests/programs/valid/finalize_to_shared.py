# expect: ok
# input: x=arange(0, 64)
# expect: result out=[120.0, 376.0, 632.0, 888.0]
#
# A finalize destination in shared memory (the RFC lets the destination be any normal
# buffer whose layout is inferred): the result is staged in shared and copied out.
import tilelang.language as T

R = 4
C = 16


@T.prim_func
def main(x: T.Tensor((R, C), T.float32), out: T.Tensor((R,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((R, C), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((R,), T.float32, op="sum")
        T.reducer_init(acc)
        for i, j in T.Parallel(R, C):
            T.reducer_update(acc[i], x_frag[i, j])
        res_shared = T.alloc_shared((R,), T.float32)
        T.finalize_reducer(acc, res_shared)
        T.copy(res_shared, out)
