# expect: error R102 at 12:35
# Found by the mangled-program campaign (verify/fuzzing/mangle.py): a fragment of 2**31 elements: MemoryError in spec/layout.py:all_indices.
# The tool crashed on it (exit 4) until sizes, constants and depths got their limits.
import tilelang.language as T

N = 8


@T.prim_func
def main(out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((2**31,), T.float32)
        T.fill(x_frag, 1.0)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(8):
            T.reducer_update(acc[0], x_frag[j])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
