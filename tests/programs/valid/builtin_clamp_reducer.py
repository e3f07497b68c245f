# expect: ok
# input: x=arange(0, 16)
# expect: result out=[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 99.0]
#
# T.clamp in a reducer index: the verifier proves acc[T.clamp(j, 0, 7)] in bounds for
# every j (Z3 reads T.clamp as TileLang's min(max(j, 0), 7)); j = 7..15 all land in
# acc[7]: 7 + 8 + ... + 15 = 99.
import tilelang.language as T

N = 16


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((8,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((8,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[T.clamp(j, 0, 7)], x_frag[j])
        result = T.alloc_fragment((8,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
