# expect: error R300 at 14:9
#
# A participant set is one range of threads: warp groups 0 and 2 leave group 1 between
# them, so no range holds exactly their threads. Nothing else is wrong with the program.
# No picture: there is no participant range to lay a grid over.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((4,), T.float32), out: T.Tensor((1,), T.float32)):
    with T.Kernel(1, threads=384) as bx:
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        with T.ws(0, 2):
            T.reducer_init(acc)
            T.reducer_update(acc[0], x[0])
            T.finalize_reducer(acc, result)
            T.copy(result, out[0:1])
