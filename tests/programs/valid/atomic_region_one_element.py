# expect: ok
# input: A=arange(0, 12)
# input: Out=[0.5, 0.5, 0.5]
# expect: result Out=[1.5, 9.5, 17.5]
#
# The tile form over a single element, `T.atomic_add(Out[bx:bx + 1], res)`: TileLang
# lowers it to a parallel loop of extent 1 (MakeIterVars, src/cuda/op/atomic_add.cc),
# and so does the frontend — one iteration, issued once by replica 0 of the loop's 32.
# Regression: it used to become a T.Parallel of no extents, on which layout inference
# crashed (found by the split-K fuzzer, tests/test_fuzz_splitk.py).
import tilelang.language as T


@T.prim_func
def main(A: T.Tensor((3, 4), T.float32), Out: T.Tensor((3,), T.float32)):
    with T.Kernel(3, threads=32) as bx:
        res = T.alloc_fragment((1,), T.float32)
        for i in T.Parallel(1):
            res[i] = A[bx, 0] + A[bx, 1]
        T.atomic_add(Out[bx:bx + 1], res)
