# expect: ok
# input: x=arange(0, 96)
# expect: result out=[0.0]
#
# Found by the mangled-program campaign (tests/programs/valid/shape_1x96.py with
# op="prod"): the product of 0, 1, ..., 95 is exactly 0, but the fast plan's butterfly
# multiplies 1..95 first, overflows float32 to inf, then inf * 0 = NaN; the interpreter's
# bound for out[0] is 0, so `check` reports a MISMATCH (exit 3) for a legal reassociation.
# A correct tool admits what reassociation can produce here (as the canonical plan's run
# of a similar kernel reports "unchecked: infinite bound") and verifies the program.
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
