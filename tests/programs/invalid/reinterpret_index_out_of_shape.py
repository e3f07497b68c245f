# expect: error R209 at 19
#
# The top 5 bits of a float32's bits, `T.reinterpret(x, "uint32") >> 27`, range over
# 0..31: one bit more than this 16-slot reducer holds (the static check reads a float's
# bits as any uint32; tests/programs/valid/reinterpret_index.py takes 4 bits).
import tilelang.language as T

N = 16


@T.prim_func
def main(x: T.Tensor((N,), T.float32), hist: T.Tensor((16,), T.int32)):
    with T.Kernel(1, threads=32) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        h = T.alloc_reducer((16,), T.int32, op="sum")
        T.reducer_init(h)
        for j in T.Parallel(N):
            T.reducer_update(h[T.reinterpret(x_frag[j], "uint32") >> 27], 1)  # <- R209
        q = T.alloc_fragment((16,), T.int32)
        T.finalize_reducer(h, q)
        T.copy(q, hist)
