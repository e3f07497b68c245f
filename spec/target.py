"""The hardware limits a generated kernel must fit, one table per target architecture.

The resource model (codegen.resources) measures a physical plan against these numbers:
going over a hard limit (shared memory, threads per block, grid extents) is R506, an
error; a register estimate over the per-thread budget is R506 as a warning, since ptxas
spills to local memory rather than failing."""
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
    async_copy: bool = False           # cp.async global -> shared (sm_80 and later)
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
        return dict(dataclasses.asdict(self), grid=list(self.grid))


TARGETS: dict[str, Target] = {
    # Hopper (H100/H200): 227 KB of the 228 KB shared memory per SM to one block with
    # cudaFuncAttributeMaxDynamicSharedMemorySize; 48 KB without it. Per SM: 228 KB of
    # shared memory, 1 KB of it reserved per block, 2048 threads, 64K registers, 32
    # blocks (the device attributes an H200 reports: docs/gpu-runs/2026-12-01-final-main.log).
    "sm_90": Target("sm_90", static_shared_bytes=48 * KIB, dynamic_shared_bytes=227 * KIB,
                    threads_per_block=1024, registers_per_thread=255,
                    registers_per_block=65536, grid=(2 ** 31 - 1, 65535, 65535),
                    async_copy=True, shared_per_sm=228 * KIB, shared_reserved=KIB),
}

DEFAULT_TARGET = "sm_90"               # the architecture generated CUDA is written for


def target(name: str = DEFAULT_TARGET) -> Target:
    """The limits of the named architecture; ValueError for one not in the table."""
    if name not in TARGETS:
        raise ValueError(f"no limits known for target {name!r}; known: "
                         f"{', '.join(TARGETS)}")
    return TARGETS[name]
