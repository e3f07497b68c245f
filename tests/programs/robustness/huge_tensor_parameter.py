# expect: error R102 at 10:54
# Found by the mangled-program campaign (verify/fuzzing/mangle.py): a tensor parameter of 2**63 elements: ValueError in verify/oracle/inputs.py:generate (2**31 x 256: MemoryError).
# The tool crashed on it (exit 4) until sizes, constants and depths got their limits.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((2**63,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(N):
            T.reducer_update(acc[0], x_frag[j])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out[0:1])
