# expect: ok
# input: x=arange(0, 1024)
# expect: result rows=[120.0, 376.0, 632.0, 888.0, 1144.0, 1400.0, 1656.0, 1912.0, 2168.0, 2424.0, 2680.0, 2936.0, 3192.0, 3448.0, 3704.0, 3960.0, 4216.0, 4472.0, 4728.0, 4984.0, 5240.0, 5496.0, 5752.0, 6008.0, 6264.0, 6520.0, 6776.0, 7032.0, 7288.0, 7544.0, 7800.0, 8056.0, 8312.0, 8568.0, 8824.0, 9080.0, 9336.0, 9592.0, 9848.0, 10104.0, 10360.0, 10616.0, 10872.0, 11128.0, 11384.0, 11640.0, 11896.0, 12152.0, 12408.0, 12664.0, 12920.0, 13176.0, 13432.0, 13688.0, 13944.0, 14200.0, 14456.0, 14712.0, 14968.0, 15224.0, 15480.0, 15736.0, 15992.0, 16248.0]
# expect: result cols=[32256.0, 32320.0, 32384.0, 32448.0, 32512.0, 32576.0, 32640.0, 32704.0, 32768.0, 32832.0, 32896.0, 32960.0, 33024.0, 33088.0, 33152.0, 33216.0]
#
# A T.Parallel(64, 16) = 1024 iterations on 128 threads: 8 slots per thread, no replicas.
# Two reducers read the same loop with different output projections: row sums (each
# output's contributions on 16 consecutive threads' slots) and column sums (spread over
# every thread).
import tilelang.language as T

R = 64
C = 16


@T.prim_func
def main(
    x: T.Tensor((R, C), T.float32),
    rows: T.Tensor((R,), T.float32),
    cols: T.Tensor((C,), T.float32),
):
    with T.Kernel(1, threads=128) as bx:
        x_frag = T.alloc_fragment((R, C), T.float32)
        T.copy(x, x_frag)
        r_acc = T.alloc_reducer((R,), T.float32, op="sum")
        c_acc = T.alloc_reducer((C,), T.float32, op="sum")
        T.reducer_init(r_acc)
        T.reducer_init(c_acc)
        for i, j in T.Parallel(R, C):
            T.reducer_update(r_acc[i], x_frag[i, j])
            T.reducer_update(c_acc[j], x_frag[i, j])
        r_res = T.alloc_fragment((R,), T.float32)
        c_res = T.alloc_fragment((C,), T.float32)
        T.finalize_reducer(r_acc, r_res)
        T.finalize_reducer(c_acc, c_res)
        T.copy(r_res, rows)
        T.copy(c_res, cols)
