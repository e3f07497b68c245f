# expect: inconclusive
# input: x=arange(0, 96)
# expect: result out=[0.0]
#
# Regression, found by the mangled-program campaign (tests/programs/valid/shape_1x96.py
# with op="prod"): the product of 0, 1, ..., 95 is exactly 0, but the fast plan's
# butterfly multiplies 1..95 first, overflows float32 to inf, then inf * 0 = NaN. The
# interpreter's bound for out[0] was 0, so `check` reported a MISMATCH (exit 3) for a
# legal reassociation. A product whose partial products can leave the normal range in
# some order now has no bound (interp/exact._leaves_range); since issue 24 such an
# element is not judged and the verdict is inconclusive (exit 5), neither a mismatch
# nor a pass.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((1, 96), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((1, 96), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="prod")
        T.reducer_init(acc)
        for i, j in T.Parallel(1, 96):
            T.reducer_update(acc[i], x_frag[i, j])
        result = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, result)
        T.copy(result, out)
