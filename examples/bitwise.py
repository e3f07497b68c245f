# expect: ok
# input: x=[32529, -239, 273, 7985, 2147483411, 4433, -1048815, 8721]
# input: u=[4026532081, 4278190323, 4042260725, 4027515129, 4294967281, 4043309297, 4026532095, 4160749809]
# expect: result x_and=[17]
# expect: result x_or=[-141]
# expect: result x_xor=[2146413922]
# expect: result u_and=[4026532081]
# expect: result u_xor=[151060224]
#
# Bitwise reducers on int32 and uint32. Their identities are all ones (bitand) and 0
# (bitor, bitxor). bitand and bitor are idempotent, so a duplicated contribution would
# hide in the value; bitxor is not: x ^ x = 0, so every replica-duplicated contribution
# would cancel (T.Parallel(8) on 128 threads has 16 replicas, an even number).
import tilelang.language as T

BD = 8
THREADS = 128


@T.prim_func
def main(
    x: T.Tensor((BD,), T.int32),
    u: T.Tensor((BD,), T.uint32),
    x_and: T.Tensor((1,), T.int32),
    x_or: T.Tensor((1,), T.int32),
    x_xor: T.Tensor((1,), T.int32),
    u_and: T.Tensor((1,), T.uint32),
    u_xor: T.Tensor((1,), T.uint32),
):
    with T.Kernel(1, threads=THREADS) as bx:
        x_frag = T.alloc_fragment((BD,), T.int32)
        u_frag = T.alloc_fragment((BD,), T.uint32)
        T.copy(x, x_frag)
        T.copy(u, u_frag)

        r_and = T.alloc_reducer((1,), T.int32, op="bitand")
        r_or = T.alloc_reducer((1,), T.int32, op="bitor")
        r_xor = T.alloc_reducer((1,), T.int32, op="bitxor")
        ru_and = T.alloc_reducer((1,), T.uint32, op="bitand")
        ru_xor = T.alloc_reducer((1,), T.uint32, op="bitxor")
        T.reducer_init(r_and)
        T.reducer_init(r_or)
        T.reducer_init(r_xor)
        T.reducer_init(ru_and)
        T.reducer_init(ru_xor)
        for j in T.Parallel(BD):
            T.reducer_update(r_and[0], x_frag[j])
            T.reducer_update(r_or[0], x_frag[j])
            T.reducer_update(r_xor[0], x_frag[j])
            T.reducer_update(ru_and[0], u_frag[j])
            T.reducer_update(ru_xor[0], u_frag[j])

        f_and = T.alloc_fragment((1,), T.int32)
        f_or = T.alloc_fragment((1,), T.int32)
        f_xor = T.alloc_fragment((1,), T.int32)
        fu_and = T.alloc_fragment((1,), T.uint32)
        fu_xor = T.alloc_fragment((1,), T.uint32)
        T.finalize_reducer(r_and, f_and)
        T.finalize_reducer(r_or, f_or)
        T.finalize_reducer(r_xor, f_xor)
        T.finalize_reducer(ru_and, fu_and)
        T.finalize_reducer(ru_xor, fu_xor)
        T.copy(f_and, x_and)
        T.copy(f_or, x_or)
        T.copy(f_xor, x_xor)
        T.copy(fu_and, u_and)
        T.copy(fu_xor, u_xor)
