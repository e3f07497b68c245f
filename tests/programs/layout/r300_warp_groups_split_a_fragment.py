# expect: error R300 at 23:46
#
# Two loops demand layouts of x_frag that no replication satisfies: the loop in warp
# group 0 writes it, so exactly its threads (0..127) hold it; the loop in warp group 1
# reads it on threads 128..255, none of which may hold a replica the writer would leave
# stale. Whichever op places x_frag first, the other one conflicts.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((4, 32), T.float32), out: T.Tensor((4,), T.float32)):
    with T.Kernel(1, threads=256) as bx:
        x_frag = T.alloc_fragment((4, 32), T.float32)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        result = T.alloc_fragment((1,), T.float32)
        with T.ws(0):
            for i, j in T.Parallel(4, 32):
                x_frag[i, j] = x[i, j] * 2.0
        with T.ws(1):
            for it in T.serial(4):
                T.reducer_init(acc)
                for j in T.Parallel(32):
                    T.reducer_update(acc[0], x_frag[it, j])  # <- R300
                T.finalize_reducer(acc, result)
                out[it] = result[0]
