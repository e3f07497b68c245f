"""Logical memory: one flat array per buffer, with a bound shadow and, for on-chip
buffers, which elements were ever written (reading one that was not is R502).

Global tensors are shared by all blocks and count as written (inputs are data);
fragment, shared, local and reducer storage is fresh per allocation. A run of chosen
blocks holds each global tensor as a *window* (`Window`): only the box of elements those
blocks can touch is stored, addressed by the tensor's own flat positions."""
from __future__ import annotations

import numpy as np

from verify_reducer.spec.diagnostics import DiagnosticError, Note, error
from verify_reducer.spec.ir import Buffer, PrimFunc
from verify_reducer.spec.source import Span

from .values import Val


class Storage:
    def __init__(self, buffer: Buffer, values: np.ndarray | None = None):
        self.buffer = buffer
        dtype = buffer.dtype
        if values is None:
            self.values = np.zeros(buffer.size, dtype=dtype.np)
            self.written = np.zeros(buffer.size, dtype=bool)
        else:
            self.values = dtype.quantize(np.asarray(values)).reshape(-1).copy()
            self.written = None       # all of it
        self.bounds: np.ndarray | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of what is stored: the buffer's (a window's, in a WindowStorage)."""
        return self.buffer.shape

    def flat(self, indices: list[np.ndarray], span: Span, code: str = "R102") -> np.ndarray:
        return flat_positions(self.buffer, indices, span, code)

    def point(self, flat_position: int) -> str:
        return ", ".join(str(int(i)) for i in np.unravel_index(flat_position,
                                                                self.buffer.shape))

    def read(self, flat: np.ndarray, span: Span, stmt_span: Span | None = None) -> Val:
        if self.written is not None:
            missing = ~self.written[flat]
            if missing.any():
                where = int(flat[int(np.argmax(missing))])
                notes = [Note("in this statement", stmt_span)] if stmt_span else []
                raise DiagnosticError(error(
                    "R502", f"read of {self.buffer.name}[{self.point(where)}], which was "
                    f"never written ({self.buffer.scope} memory starts uninitialized)",
                    span, *notes))
        b = None if self.bounds is None else self.bounds[flat]
        if b is not None and not b.any():
            b = None
        return Val(self.values[flat], self.buffer.dtype, b)

    def write(self, flat: np.ndarray, val: Val) -> None:
        self.values[flat] = self.buffer.dtype.quantize(val.v)
        if val.b is not None and val.b.any():
            if self.bounds is None:
                self.bounds = np.zeros(len(self.values))
            self.bounds[flat] = val.b
        elif self.bounds is not None:
            self.bounds[flat] = 0.0
        if self.written is not None:
            self.written[flat] = True

    def write_all(self, values: np.ndarray, bounds: np.ndarray | None) -> None:
        self.write(np.arange(self.buffer.size), Val(values.reshape(-1), self.buffer.dtype,
                                                     None if bounds is None
                                                     else bounds.reshape(-1)))

    def uncertain_everywhere(self) -> None:
        """A store through an uncertain index could have landed anywhere."""
        self.bounds = np.full(len(self.values), np.inf)

    def array(self) -> np.ndarray:
        return self.values.reshape(self.shape).copy()

    def bound_array(self) -> np.ndarray:
        if self.bounds is None:
            return np.zeros(self.shape)
        return self.bounds.reshape(self.shape).copy()


def unallocated(buffer: Buffer, span: Span) -> DiagnosticError:
    """R102 for a buffer used where its allocation has not run (or ran in a scope
    this use is outside of)."""
    kind = "reducer" if buffer.is_reducer else "buffer"
    return DiagnosticError(error(
        "R102", f"{kind} {buffer.name} is used before its allocation", span))


def flat_positions(buffer: Buffer, indices: list[np.ndarray], span: Span,
                   code: str = "R102") -> np.ndarray:
    """Row-major flat positions of per-lane index tuples; an index outside the buffer
    is refused with code (R102, or R209 for a reducer update), naming the first such
    point. The logical interpreter and the simulator index every buffer through this."""
    shape = buffer.shape
    if len(indices) != len(shape):
        raise DiagnosticError(error(
            "R102", f"{buffer.name} has {len(shape)} dimensions, indexed with "
            f"{len(indices)}", span))
    flat = np.zeros(len(indices[0]) if indices else 1, dtype=np.int64)
    for dim, (idx, extent) in enumerate(zip(indices, shape)):
        bad = (idx < 0) | (idx >= extent)
        if bad.any():
            where = int(np.argmax(bad))
            point = ", ".join(str(int(i[where])) for i in indices)
            raise DiagnosticError(error(
                code, f"index [{point}] is out of bounds of {buffer.name} "
                f"{list(shape)} (dimension {dim})", span))
        flat = flat * extent + idx.astype(np.int64)
    return flat


Box = tuple[tuple[int, int], ...]     # per dimension [lo, hi)


class Window:
    """The box of a global tensor that a run of chosen blocks may touch, and the map
    from the tensor's flat positions to the box's own row-major positions. A position
    outside the box means the footprint analysis that chose it was wrong: our bug, so
    it raises (exit 4), never a diagnostic about the program."""

    def __init__(self, buffer: Buffer, box: Box):
        self.buffer = buffer
        self.box = box
        self.lo = np.array([lo for lo, _ in box], dtype=np.int64)
        self.shape = tuple(hi - lo for lo, hi in box)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        full = buffer.shape[1:] == self.shape[1:]
        # a window whole in every dimension but the first is one run of the tensor:
        # positions map by a subtraction
        self.start = int(np.ravel_multi_index(tuple(self.lo), buffer.shape)) \
            if full and self.size else None

    def local(self, flat: np.ndarray | slice) -> np.ndarray:
        if isinstance(flat, slice):
            flat = np.arange(flat.start, flat.stop, flat.step or 1)
        flat = np.asarray(flat, dtype=np.int64)
        if not self.shape:
            return flat
        if self.start is not None:
            local = flat - self.start
            if len(local) == 0 or (local.min() >= 0 and local.max() < self.size):
                return local
        coords = np.unravel_index(flat, self.buffer.shape)
        rel = [c - lo for c, lo in zip(coords, self.lo)]
        inside = np.ones(flat.shape, dtype=bool)
        for r, n in zip(rel, self.shape):
            inside &= (r >= 0) & (r < n)
        if not inside.all():
            at = int(flat[np.argmax(~inside)])
            raise RuntimeError(
                f"{self.buffer.name} position {at} lies outside the window {list(self.box)} "
                "of the blocks being run (the block footprint analysis missed an access)")
        return np.ravel_multi_index(tuple(rel), self.shape)

    def origin(self, local_index: tuple[int, ...]) -> tuple[int, ...]:
        """The tensor index of an index inside the window."""
        return tuple(int(i + lo) for i, lo in zip(local_index, self.lo))


class WindowStorage(Storage):
    """A global tensor's Storage restricted to a window; remembers which elements were
    written, so a comparison can cover exactly those."""

    def __init__(self, buffer: Buffer, values: np.ndarray, window: Window):
        super().__init__(buffer, values)
        self.window = window
        self.wrote = np.zeros(window.size, dtype=bool)

    def read(self, flat: np.ndarray, span: Span, stmt_span: Span | None = None) -> Val:
        return super().read(self.window.local(flat), span, stmt_span)

    def write(self, flat: np.ndarray, val: Val) -> None:
        local = self.window.local(flat)
        super().write(local, val)
        self.wrote[local] = True

    def write_all(self, values: np.ndarray, bounds: np.ndarray | None) -> None:
        if self.window.size != self.buffer.size:
            raise RuntimeError(f"a whole-tensor write of {self.buffer.name} in a window")
        super().write_all(values, bounds)
        self.wrote[:] = True

    @property
    def shape(self) -> tuple[int, ...]:
        return self.window.shape


class WindowArray:
    """The simulator's flat global array, restricted to a window: indexed by the
    tensor's flat positions like the whole array it stands for."""

    def __init__(self, values: np.ndarray, window: Window):
        self.values = values.reshape(-1)
        self.window = window
        self.wrote = np.zeros(window.size, dtype=bool)

    def __len__(self) -> int:
        return self.window.buffer.size

    @property
    def size(self) -> int:
        return self.window.buffer.size

    def __getitem__(self, flat) -> np.ndarray:
        return self.values[self.window.local(flat)]

    def __setitem__(self, flat, values) -> None:
        local = self.window.local(flat)
        self.values[local] = values
        self.wrote[local] = True

    def copy(self) -> np.ndarray:
        if self.window.size != self.window.buffer.size:
            raise RuntimeError(f"a whole-tensor read of {self.window.buffer.name} in a window")
        return self.values.copy()


def check_race(storage: Storage, flat: np.ndarray, val: Val, span: Span,
               reads_itself: bool = False) -> None:
    """Two iterations of a T.Parallel that store different values to one element race:
    the logical for-all has no order to pick a winner by. reads_itself: the stored value
    reads the destination (a read-modify-write, whose interleaving the message spells)."""
    if len(flat) < 2:
        return
    order = np.argsort(flat, kind="stable")
    f = flat[order]
    v = storage.buffer.dtype.quantize(val.v)[order]
    same_place = f[1:] == f[:-1]
    if not same_place.any():
        return
    a, b = v[1:], v[:-1]
    differ = a != b
    if storage.buffer.dtype.is_float:
        differ &= ~(np.isnan(a) & np.isnan(b))
    clash = same_place & differ
    if clash.any():
        k = int(np.argmax(clash))
        element = f"{storage.buffer.name}[{storage.point(int(f[k]))}]"
        rmw = "" if not reads_itself else (
            f"; a read-modify-write by several iterations: both read {element}, then "
            f"both store it, and one update is lost (T.atomic_add makes each update "
            f"indivisible)")
        raise DiagnosticError(error(
            "R102", f"iterations of the T.Parallel store different values ({b[k]} and "
            f"{a[k]}) to {element}: a race{rmw}", span))


def kernel_inputs(func: PrimFunc, inputs: dict[str, np.ndarray],
                  windows: dict[str, Window] | None = None) -> dict[Buffer, np.ndarray]:
    """Every tensor parameter's input array in the parameter's shape, or its window's
    when windows are given (the caller's arrays are never aliased by what comes back
    to be written). R102 when the inputs do not name every parameter exactly or an
    array has the wrong size."""
    names = {p.name for p in func.params}
    unknown = sorted(set(inputs) - names)
    missing = [p.name for p in func.params if p.name not in inputs]
    if unknown or missing:
        raise DiagnosticError(error(
            "R102", f"inputs must name every parameter of {func.name} exactly; missing "
            f"{missing}, unknown {unknown}", func.span))
    out = {}
    for p in func.params:
        arr = np.asarray(inputs[p.name])
        if windows is not None:
            out[p] = arr.reshape(windows[p.name].shape)
            continue
        if arr.size != p.size:
            raise DiagnosticError(error(
                "R102", f"input {p.name} has shape {list(arr.shape)}, the parameter "
                f"{list(p.shape)}", p.span))
        out[p] = arr.reshape(p.shape)
    return out
