# expect: error R102 at 14:31
# Found by the mangled-program campaign (verify/fuzzing/mangle.py): a reducer of 2**40 outputs: MemoryError in interp/memory.py:__init__.
# The tool crashed on it (exit 4) until sizes, constants and depths got their limits.
import tilelang.language as T

N = 8


@T.prim_func
def main(x: T.Tensor((N,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((2**40,), T.float32, op="sum", replication="all")
        T.clear(acc)
        for j in T.Parallel(N):
            acc[0] += x_frag[j]
        T.finalize_reducer(acc)
        T.copy(acc[0:1], out)
