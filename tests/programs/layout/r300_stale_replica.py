# expect: error R300 at 19:17
#
# A write that would leave replicas stale: the statement at line 16 (outside T.Parallel,
# run by every participant) places x_frag fully replicated over the 256 threads, then
# the loop in warp group 0 writes each element on its own four threads only. Every
# other holder (thread 0 for x_frag[0, 1], say) would keep the old value. Whichever op
# places x_frag first, the other conflicts; R300 names the writer and the placement,
# and its picture marks the holder that does not run the iteration writing it.
import tilelang.language as T


@T.prim_func
def main(x: T.Tensor((2, 16), T.float32), out: T.Tensor((2,), T.float32)):
    with T.Kernel(1, threads=256) as bx:
        x_frag = T.alloc_fragment((2, 16), T.float32)
        x_frag[0, 0] = 1.0
        with T.ws(0):
            for i, j in T.Parallel(2, 16):
                x_frag[i, j] = x[i, j] * 2.0
            for i in T.serial(2):
                out[i] = x_frag[i, 0]
