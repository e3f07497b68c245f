# expect: ok
# input: x=arange(1, 9)
# expect: result total=[36.0]
# expect: result y=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
#
# Copies between global memory and a fragment whose layout gives each thread contiguous
# runs: x_frag is first reached by a statement outside T.Parallel, so it is placed fully
# replicated (every thread holds all 8 elements in slots 0..7). The copy x -> x_frag then
# loads two runs of 4 floats per thread, and x_frag -> y stores them from replica 0:
# 128-bit float4 accesses, unpacked into (or packed from) the registers element by element.
import tilelang.language as T


@T.prim_func
def main(
    x: T.Tensor((8,), T.float32),
    y: T.Tensor((8,), T.float32),
    total: T.Tensor((1,), T.float32),
):
    with T.Kernel(1, threads=32) as bx:
        x_frag = T.alloc_fragment((8,), T.float32)
        x_frag[0] = T.float32(0)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(8):
            T.reducer_update(acc[0], x_frag[j])
        res = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, res)
        T.copy(res, total)
        T.copy(x_frag, y)
