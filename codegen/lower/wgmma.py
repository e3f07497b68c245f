"""Hopper's warpgroup MMA (wgmma.mma_async, sm_90a): swizzled shared operands, their
matrix descriptors, and the accumulator registers of each instruction.

    swizzle_of(buffer) -> Swizzle | None       the operand's shared layout, if it has one
    Swizzle.physical(flat) / .logical(byte)    element <-> byte offset in one stage
    wgmma_refusal(stmt, target, participants, threads) -> why not ("" : it fits)
    plan_wgmma(stmt, m, n, k, warps, count) -> Wgmma

**Shared layout (plan data: PhysicalPlan.swizzles).** A 2-D shared operand [R, C] (C
contiguous, `e`-byte elements) is stored in *chunks* of W = 128, 64 or 32 bytes of each
row (the largest that divides a row; w = W/e columns): chunk q holds columns [q·w,
(q+1)·w) of every row, R rows of W bytes, chunk after chunk. Inside a chunk, the 16-byte
unit u of row r moves to unit u XOR (r mod W/16) — in bytes, bits [4, 4+b) of the
offset XOR bits [7, 7+b), b = log2(W/16): CUTLASS's Swizzle<b,4,3>, the hardware's
128B/64B/32B swizzle modes. The hardware applies it to the absolute shared address, so a
stage starts on a multiple of 8·W bytes (codegen.resources aligns it, and the kernel's
shared memory to 1024). A 16-byte run aligned to 16 bytes stays one unit: cp.async and
vector accesses are unchanged in kind, only their addresses move.

**Descriptors (PTX ISA, "Matrix Descriptor Format").** A wgmma reads each operand from
shared memory through a 64-bit descriptor: start address >> 4 (bits 0-13), the leading
byte offset >> 4 (16-29), the stride byte offset >> 4 (32-45), the swizzle mode (62-63: 1
= 128B, 2 = 64B, 3 = 32B). With the layout above, element (x, y) of an instruction's
operand tile — x along M (A) or N (B), y along K — lies at the byte

    K-major (the buffer's rows are M or N, K contiguous):
        start + (x / 8)·SBO + (x mod 8)·W + y·e,                 SBO = 8·W, LBO unused
    MN-major (the rows are K, M or N contiguous):
        start + (x / w)·LBO + (y / 8)·SBO + (y mod 8)·W + (x mod w)·e,
                                                                 LBO = R·W, SBO = 8·W

before the swizzle, where `start` is the tile's first element's offset (its chunk, row
and column). A K-major step of 16 elements stays inside one chunk (W >= 32 bytes); an
MN-major instruction's N (or M) starts on a chunk or stays inside one. The simulator
decodes every element's byte this way (Wgmma.operand_byte) and reads the element the
stage holds there (Swizzle.logical): a descriptor that names a wrong element computes a
wrong value there, before any GPU runs it.

**Accumulator.** With warps split along M only (warps × 1, the accumulator layout of
codegen.lower.gemm.accumulator_layout), warpgroup g (threads 128g .. 128g+127) owns rows
64g .. 64g+63 of every 16·warps-row tile; one m64nNk16 instruction per (tile, N block)
and k step. Its register r of lane l in warp v of the group holds row 16v + l/4 +
8·((r/2) mod 2), column 8·(r/4) + 2·(l mod 4) + (r mod 2) of the instruction's tile
(PTX's wgmma D fragment, the m16n8 tile's repeated over N/8) — which is slot r mod 4 +
4·(tile + column/8 · tiles) of the accumulator layout, so each register is named by
its slot (Wgmma.c_slot); the renderer lists them in the instruction's order."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from verify_reducer.spec import ir
from verify_reducer.spec.indexexpr import IndexExpr, Var

WARPGROUP = 128                 # threads
INSTR_M, INSTR_K = 64, 16       # m64nNk16 for 16-bit operands
MAX_N = 256
OPERANDS = {"float16": "f16", "bfloat16": "bf16"}   # with a float32 accumulator
MODES = {128: 1, 64: 2, 32: 3}  # swizzle width (bytes) -> the descriptor's mode field
TILE, NBLOCK, STEP, GROUP = "wt", "wn", "ks", "wg"  # variables of a descriptor's start
THREAD, REG = "t", "r"          # and of A's registers (WgmmaRegisters)


@dataclass(frozen=True)
class Swizzle:
    """The shared layout of one 2-D operand buffer (see the module's docstring)."""
    rows: int
    cols: int
    element: int                # bytes
    width: int                  # W: bytes of a row in one chunk (128, 64 or 32)

    @property
    def chunk_cols(self) -> int:
        return self.width // self.element

    @property
    def mask(self) -> int:
        return self.width // 16 - 1

    @property
    def align(self) -> int:
        """Bytes a stage's start must be a multiple of (the swizzle reads address bits
        up to 7 + log2(W/16))."""
        return 8 * self.width

    def chunked(self, row, col):
        """The element offset of (row, col) before the swizzle: its chunk, its row in
        the chunk, its column in the row (ints, numpy arrays or spec.indexexpr
        expressions)."""
        w = self.chunk_cols
        return (col // w) * (self.rows * w) + row * w + col % w

    def unswizzled(self, flat):
        """The byte offset of logical element `flat` (row-major) before the swizzle."""
        return self.chunked(flat // self.cols, flat % self.cols) * self.element

    def swizzle(self, byte):
        """Bits [4, 4+b) XOR bits [7, 7+b) (ints or numpy arrays; an involution)."""
        return byte ^ (((byte >> 7) & self.mask) << 4)

    def physical(self, flat):
        """The byte of logical element `flat` in its stage (ints or numpy arrays)."""
        return self.swizzle(self.unswizzled(flat))

    def logical(self, byte):
        """The logical element at `byte` of a stage (the inverse of physical; byte a
        multiple of the element size; ints or numpy arrays)."""
        q = self.swizzle(byte)
        chunk, inside = q // (self.rows * self.width), q % (self.rows * self.width)
        return (inside // self.width) * self.cols + chunk * self.chunk_cols \
            + (inside % self.width) // self.element

    def c_shift(self) -> tuple[int, int]:
        """(right, left) shifts of the swizzle in element units: e ^ ((e >> right) &
        mask) << left, for a C expression over element offsets."""
        s = self.element.bit_length() - 1
        return 7 - s, 4 - s

    def describe(self) -> str:
        return (f"{self.width}B swizzle, {self.cols // self.chunk_cols} chunk(s) of "
                f"{self.chunk_cols} columns")


def swizzle_of(buffer: ir.Buffer) -> Swizzle | None:
    """The swizzled layout a 2-D shared operand can take (None: rows under 32 bytes or
    not a multiple, rows not a multiple of 8)."""
    if buffer.scope != "shared" or len(buffer.shape) != 2:
        return None
    rows, cols = buffer.shape
    element = buffer.dtype.bits // 8
    if element not in (1, 2, 4) or rows % 8:
        return None
    row_bytes = cols * element
    width = next((w for w in (128, 64, 32) if row_bytes % w == 0), None)
    return None if width is None else Swizzle(rows, cols, element, width)


def wgmma_refusal(stmt: ir.Gemm, target, participants: tuple[int, int]) -> str:
    """Why the gemm does not run as wgmma ("" where it does): the target, the dtypes,
    both operands in shared memory with a swizzled layout, whole warpgroups and
    64-row instruction tiles with warps along M."""
    offset, count = participants
    m, n, k = stmt.mnk
    if not getattr(target, "wgmma", False):
        return f"{target.name} has no wgmma"
    if stmt.a.dtype.name not in OPERANDS or stmt.b.dtype.name != stmt.a.dtype.name \
            or stmt.c.dtype.name != "float32":
        return "wgmma here takes float16/bfloat16 operands into a float32 accumulator"
    if stmt.a.scope not in ("shared", "fragment") or stmt.b.scope != "shared" \
            or stmt.c.scope != "fragment":
        return "wgmma reads B from shared memory and A from shared memory or registers"
    if offset % WARPGROUP or count % WARPGROUP:
        return "the gemm's threads are not whole warpgroups"
    groups = count // WARPGROUP
    if m % (INSTR_M * groups) or k % INSTR_K or n % 8:
        return f"{m}×{n}×{k} is not whole m64nNk16 tiles over {groups} warpgroup(s)"
    for operand, major, extent in ((stmt.a, "MN" if stmt.transpose_a else "K", INSTR_M),
                                   (stmt.b, "K" if stmt.transpose_b else "MN", _instr_n(n))):
        if operand.scope == "fragment":
            continue                   # A in registers: the mma's A fragment per warp
        swz = swizzle_of(operand)
        if swz is None:
            return (f"{operand.name}'s rows cannot be swizzled (a multiple of 8 rows of "
                    f"32, 64 or 128 bytes)")
        if major == "MN" and extent % swz.chunk_cols and swz.chunk_cols % extent:
            return (f"{operand.name}'s chunks of {swz.chunk_cols} columns split an "
                    f"instruction's {extent}")
    if groups > 1 and stmt.policy == "FullCol":
        return "policy FullCol splits N among the warps; wgmma here splits M"
    return ""


def _instr_n(n: int) -> int:
    """The instruction's N: the whole N where it fits, else the largest multiple of 8
    up to 256 that divides it."""
    return next(x for x in range(min(n, MAX_N), 0, -8) if n % x == 0)


@dataclass(frozen=True)
class WgmmaOperand:
    """One operand's descriptor: `major` "K" or "MN", the buffer's Swizzle, LBO and SBO
    in bytes, and the instruction tile's first element (flat, logical) over TILE (the
    accumulator tile along M), NBLOCK (the N block), STEP (the k step), GROUP (the
    warpgroup)."""
    buffer: ir.Buffer
    major: str
    swizzle: Swizzle
    lbo: int
    sbo: int
    first: IndexExpr            # flat logical element of the tile's (x=0, y=0)

    @property
    def transposed(self) -> int:
        """wgmma's imm-trans operand: 1 for an MN-major operand."""
        return 1 if self.major == "MN" else 0

    def start(self, env) -> object:
        """The tile's start byte (before the swizzle) at the variables of env."""
        return self.swizzle.unswizzled(self.first.evaluate(env))

    def byte(self, start, x, y):
        """The byte of the tile's element (x, y) (x along M/N, y along K), before the
        swizzle: the canonical layout the descriptor describes (module docstring)."""
        s = self.swizzle
        if self.major == "K":
            return start + (x // 8) * self.sbo + (x % 8) * s.width + y * s.element
        return start + (x // s.chunk_cols) * self.lbo + (y // 8) * self.sbo \
            + (y % 8) * s.width + (x % s.chunk_cols) * s.element


@dataclass(frozen=True)
class WgmmaRegisters:
    """A from the threads' own registers (wgmma's A-in-registers form, TileLang's
    wgmma_rs): each warp holds the mma.sync m16k16 A fragment of its 16 rows of the
    instruction tile (codegen.lower.gemm.mma_a_position, two 16-bit elements to a
    register). Element r (REG, 0..7) of thread t (THREAD) for tile TILE at step STEP is
    A's (row, kk), kept in the fragment's slot `slot` (operand_layout_a's)."""
    buffer: ir.Buffer
    row: IndexExpr
    kk: IndexExpr
    slot: IndexExpr

    elements = 8                # per thread per instruction: four 32-bit registers


@dataclass(frozen=True)
class Wgmma:
    """A gemm as wgmma.mma_async.m64n{instr_n}k16: per warpgroup, `tiles` tiles along M
    × `nblocks` N blocks, `steps` k steps in order (one wgmma each), the accumulator
    registers of instruction (tile, nblock) register r at slot c_slot (module
    docstring)."""
    a: "WgmmaOperand | WgmmaRegisters"
    b: WgmmaOperand
    instr_n: int
    tiles: int
    nblocks: int
    steps: int
    instruction: str            # e.g. "f32.f16.f16"

    @property
    def registers(self) -> int:
        """Accumulator registers of one instruction per thread."""
        return self.instr_n // 2

    def c_slot(self, tile, nblock, reg):
        """The accumulator slot of register `reg` of instruction (tile, nblock)."""
        column_group = nblock * (self.instr_n // 8) + reg // 4
        return reg % 4 + (tile + column_group * self.tiles) * 4

    def c_element(self, t, tile, nblock, reg, warps: int):
        """(row, col) of C that thread t's register `reg` of instruction (tile, nblock)
        holds (the hardware's D fragment; ints, numpy arrays or expressions)."""
        lane, warp = t % 32, t // 32
        row = tile * (16 * warps) + (warp // 4) * INSTR_M + (warp % 4) * 16 \
            + lane // 4 + (reg // 2) % 2 * 8
        col = nblock * self.instr_n + reg // 4 * 8 + lane % 4 * 2 + reg % 2
        return row, col

    @property
    def registers_a(self) -> bool:
        """A comes from the threads' registers (wgmma's rs form)."""
        return isinstance(self.a, WgmmaRegisters)

    def describe(self) -> str:
        def op(o) -> str:
            if isinstance(o, WgmmaRegisters):
                return (f"{o.buffer.name} from registers, element r of thread t at tile "
                        f"{TILE}, step {STEP}: [{o.row}, {o.kk}] in slot {o.slot}")
            return (f"{o.buffer.name} {o.major}-major, {o.swizzle.describe()}, LBO {o.lbo} "
                    f"SBO {o.sbo} bytes, tile at element {o.first}")
        return (f"wgmma.mma_async m64n{self.instr_n}k16 ({self.instruction}): per "
                f"warpgroup {self.tiles}×{self.nblocks} instruction tile(s), {self.steps} "
                f"k step(s) in order; A: {op(self.a)}; B: {op(self.b)}")


def plan_wgmma(stmt: ir.Gemm, m: int, n: int, k: int, warps: int,
               swizzle: Callable[[ir.Buffer], Swizzle],
               registers: WgmmaRegisters | None = None) -> Wgmma:
    """The wgmma form of a gemm wgmma_refusal accepted, its warps (count / 32) along M,
    its shared operands stored as `swizzle` (the plan's) says; `registers`: A's
    registers where A is a fragment (codegen.lower.gemm builds them from the mma's A
    fragment map)."""
    tile, nblock, step, group = (Var(x) for x in (TILE, NBLOCK, STEP, GROUP))
    instr_n = _instr_n(n)
    row0 = tile * (16 * warps) + group * INSTR_M          # the instruction's first row
    col0 = nblock * instr_n
    k0 = step * INSTR_K

    def operand(buffer: ir.Buffer, major: str, first) -> WgmmaOperand:
        swz = swizzle(buffer)
        lbo = swz.rows * swz.width if major == "MN" else 16
        return WgmmaOperand(buffer, major, swz, lbo, 8 * swz.width, first)

    a = registers or operand(stmt.a, "MN" if stmt.transpose_a else "K",
                             k0 * m + row0 if stmt.transpose_a else row0 * k + k0)
    b = operand(stmt.b, "K" if stmt.transpose_b else "MN",
                col0 * k + k0 if stmt.transpose_b else k0 * n + col0)
    name = OPERANDS[stmt.a.dtype.name]
    return Wgmma(a, b, instr_n, m // (16 * warps), n // instr_n, k // INSTR_K,
                 f"f32.{name}.{name}")


def descriptor_fields(op: WgmmaOperand) -> tuple[int, int, int]:
    """(LBO >> 4, SBO >> 4, mode) of the descriptor's constant fields."""
    return op.lbo >> 4, op.sbo >> 4, MODES[op.swizzle.width]

