# expect: ok
# input: x=[1e999, -1e999, 1, 2, 3, 4, 5, 6]
#
# An output that is NaN: the sum of +inf and -inf (1e999 is read as infinity). Every
# plan agrees with the interpreter (NaN matches NaN), and `--json` must still be strict
# JSON: the NaN output and the infinite inputs are written "nan", "inf" and "-inf"
# (tests/test_cli_conventions.py parses it with a parser that refuses NaN/Infinity).
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((8,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=32) as bx:
        x_frag = T.alloc_fragment((8,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
        for j in T.Parallel(8):
            T.reducer_update(acc[0], x_frag[j])
        acc_frag = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, acc_frag)
        T.copy(acc_frag, out)
