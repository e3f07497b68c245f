"""The GPU architectures a kernel can be planned for: each one's hardware limits and its
features, as data (docs/design.md §27).

    target("sm_80")                   # the Target, ValueError naming the known ones
    target_for_capability(8, 6)       # the device's compute capability -> its name

The resource model (codegen.resources) measures a physical plan against these numbers:
going over a hard limit (shared memory, threads per block, grid extents) is R506, an
error; a register estimate over the per-thread budget is R506 as a warning, since ptxas
spills to local memory rather than failing. The occupancy rule (codegen.occupancy) reads
the per-SM figures. The features decide lowerings: a pipeline's cp.async
(codegen.pipeline), a T.atomic_addxN's one vector instruction or one atomic per lane
(codegen.lower.atomics). Every such decision reads a flag here; none compares names."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

KIB = 1024


@dataclass(frozen=True)
class Target:
    name: str                          # the nvcc -arch name, e.g. "sm_90"
    static_shared_bytes: int           # `__shared__` arrays: ptxas refuses more
    dynamic_shared_bytes: int          # per block, with the opt-in launch attribute
    threads_per_block: int
    registers_per_thread: int          # what one thread can address
    registers_per_block: int           # the register file one block can use
    grid: tuple[int, int, int]         # the largest extent of x, y and z
    compute_capability: tuple[int, int] = (9, 0)
    # features: what the lowerings may use
    async_copy: bool = False           # cp.async global -> shared (sm_80 and later)
    # atomicAdd on float2/float4 and PTX's vector atom (`atom.global.v4.f16`): sm_90 and
    # later (CUDA C++ Programming Guide, "atomicAdd()"; PTX ISA, "atom": .v2/.v4 need
    # sm_90). Without them a T.atomic_addxN is one element atomic per lane.
    vector_float_atomics: bool = False
    # cvt to and from e4m3/e5m2 in hardware (sm_89 and later); cuda_fp8.hpp converts in
    # software below that, with the same rounding and saturation (tests/test_arch.py)
    fp8_conversions: bool = False
    # mma.sync with .e4m3/.e5m2 operands (PTX ISA, "mma": sm_89 and later); below that a
    # float8 T.gemm is multiply-adds (codegen.lower.gemm)
    fp8_mma: bool = False
    wgmma: bool = False                # warpgroup MMA: sm_90 only (sm_90a's wgmma.*)
    # what one SM holds of the blocks resident on it (the occupancy calculator's figures)
    shared_per_sm: int = 0             # shared memory for all its blocks
    shared_reserved: int = 0           # taken of it per block by the system
    shared_granule: int = 128          # shared memory goes to blocks in these
    threads_per_sm: int = 2048
    registers_per_sm: int = 65536
    blocks_per_sm: int = 32

    def register_budget(self, threads: int) -> int:
        """Registers one thread can have without spilling when `threads` threads run
        in a block (`__launch_bounds__` tells ptxas the same)."""
        return min(self.registers_per_thread, self.registers_per_block // max(threads, 1))

    def resident_blocks(self, threads: int, shared_bytes: int,
                        registers: int | None = None) -> int:
        """Blocks of one kernel an SM holds at once: as many as its threads, its shared
        memory (static and dynamic, with the per-block reservation, in granules) and,
        where ptxas's count per thread is known, its registers (256 per warp at a time)
        allow."""
        fits = [self.blocks_per_sm, self.threads_per_sm // max(threads, 1)]
        if self.shared_per_sm:
            fits.append(self.shared_per_sm // self._granules(shared_bytes + self.shared_reserved))
        if registers:
            warp_registers = -(-registers * 32 // 256) * 256
            fits.append(self.registers_per_sm // (-(-threads // 32) * warp_registers))
        return min(fits)

    def shared_for(self, blocks: int) -> int:
        """The most shared memory (static and dynamic) a block may take so that no more
        than `blocks` fit on an SM by shared memory."""
        room = self.shared_per_sm // blocks - self.shared_reserved
        return min(room // self.shared_granule * self.shared_granule, self.dynamic_shared_bytes)

    def _granules(self, n: int) -> int:
        return -(-n // self.shared_granule) * self.shared_granule

    def to_json(self) -> dict:
        return dict(dataclasses.asdict(self), grid=list(self.grid),
                    compute_capability=list(self.compute_capability))


def _target(name: str, shared_per_sm_kib: int, threads_per_sm: int, blocks_per_sm: int,
            **features) -> Target:
    """One architecture of the table. What every one of them shares: 1024 threads and
    64K registers per block, 255 registers per thread, 64K registers per SM, 48 KB of
    static shared memory, the grid extents, and 1 KB of shared memory the system
    reserves per block; a block may opt into all of the SM's shared memory but that
    reservation."""
    major, minor = divmod(int(name[3:]), 10)
    return Target(name, static_shared_bytes=48 * KIB,
                  dynamic_shared_bytes=(shared_per_sm_kib - 1) * KIB,
                  threads_per_block=1024, registers_per_thread=255,
                  registers_per_block=65536, grid=(2 ** 31 - 1, 65535, 65535),
                  compute_capability=(major, minor), shared_per_sm=shared_per_sm_kib * KIB,
                  shared_reserved=KIB, threads_per_sm=threads_per_sm,
                  registers_per_sm=65536, blocks_per_sm=blocks_per_sm, **features)


# The figures of the CUDA C++ Programming Guide's "Technical Specifications per Compute
# Capability" table (shared memory per SM, the opt-in maximum per block, resident threads
# and blocks per SM, registers), as NVIDIA's CCCL also encodes them
# (libcudacxx/include/cuda/__device/arch_traits.h: arch_traits<arch_id::sm_NN>, with
# reserved_shared_memory_per_block = 1 KB from 8.0 on and cp_async_supported from 8.0 on).
# sm_90's agree with what an H200 reports (docs/gpu-runs/2026-12-01-final-main.log).
TARGETS: dict[str, Target] = {t.name: t for t in (
    # A100: 164 KB per SM, 163 KB to one block
    _target("sm_80", 164, threads_per_sm=2048, blocks_per_sm=32, async_copy=True),
    # A10, A40, RTX 30xx (GA10x): 100 KB per SM, 1536 threads and 16 blocks
    _target("sm_86", 100, threads_per_sm=1536, blocks_per_sm=16, async_copy=True),
    # L4, L40, RTX 40xx (Ada): as GA10x but 24 blocks, and fp8 conversions in hardware
    _target("sm_89", 100, threads_per_sm=1536, blocks_per_sm=24, async_copy=True,
            fp8_conversions=True, fp8_mma=True),
    # H100, H200 (Hopper): 228 KB per SM, 227 KB to one block
    _target("sm_90", 228, threads_per_sm=2048, blocks_per_sm=32, async_copy=True,
            vector_float_atomics=True, fp8_conversions=True, fp8_mma=True, wgmma=True),
    # B200 (Blackwell): Hopper's figures; no wgmma (tcgen05 replaces it)
    _target("sm_100", 228, threads_per_sm=2048, blocks_per_sm=32, async_copy=True,
            vector_float_atomics=True, fp8_conversions=True, fp8_mma=True),
)}

DEFAULT_TARGET = "sm_90"               # the architecture generated CUDA is written for


def target(name: str = DEFAULT_TARGET) -> Target:
    """The limits of the named architecture; ValueError for one not in the table."""
    if name not in TARGETS:
        raise ValueError(f"unknown target architecture {name!r}; known: "
                         f"{', '.join(TARGETS)}")
    return TARGETS[name]


def target_for_capability(major: int, minor: int) -> str:
    """The table's name for a device of compute capability major.minor (what the CUDA
    runner reads off the GPU); ValueError for one the table does not hold."""
    for t in TARGETS.values():
        if t.compute_capability == (major, minor):
            return t.name
    raise ValueError(f"no target architecture for compute capability {major}.{minor}; "
                     f"known: {', '.join(TARGETS)}")
