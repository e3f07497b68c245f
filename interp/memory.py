"""Logical memory: one flat array per buffer, with a bound shadow and, for on-chip
buffers, which elements were ever written (reading one that was not is R502).

Global tensors are shared by all blocks and count as written (inputs are data);
fragment, shared, local and reducer storage is fresh per allocation."""
from __future__ import annotations

import numpy as np

from spec.diagnostics import DiagnosticError, Note, error
from spec.ir import Buffer, PrimFunc
from spec.source import Span

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

    def flat(self, indices: list[np.ndarray], span: Span, code: str = "R102") -> np.ndarray:
        """Row-major flat positions of per-lane index tuples; out of bounds is an error."""
        shape = self.buffer.shape
        if len(indices) != len(shape):
            raise DiagnosticError(error(
                "R102", f"{self.buffer.name} has {len(shape)} dimensions, indexed with "
                f"{len(indices)}", span))
        flat = np.zeros(len(indices[0]) if indices else 1, dtype=np.int64)
        for dim, (idx, extent) in enumerate(zip(indices, shape)):
            bad = (idx < 0) | (idx >= extent)
            if bad.any():
                where = int(np.argmax(bad))
                point = ", ".join(str(int(i[where])) for i in indices)
                raise DiagnosticError(error(
                    code, f"index [{point}] is out of bounds of {self.buffer.name} "
                    f"{list(shape)} (dimension {dim})", span))
            flat = flat * extent + idx.astype(np.int64)
        return flat

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
                self.bounds = np.zeros(self.buffer.size)
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
        self.bounds = np.full(self.buffer.size, np.inf)

    def array(self) -> np.ndarray:
        return self.values.reshape(self.buffer.shape).copy()

    def bound_array(self) -> np.ndarray:
        if self.bounds is None:
            return np.zeros(self.buffer.shape)
        return self.bounds.reshape(self.buffer.shape).copy()


def check_race(storage: Storage, flat: np.ndarray, val: Val, span: Span) -> None:
    """Two iterations of a T.Parallel that store different values to one element race:
    the logical for-all has no order to pick a winner by."""
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
        raise DiagnosticError(error(
            "R102", f"iterations of the T.Parallel store different values ({b[k]} and "
            f"{a[k]}) to {storage.buffer.name}[{storage.point(int(f[k]))}]: a race", span))


def kernel_inputs(func: PrimFunc, inputs: dict[str, np.ndarray]) -> dict[Buffer, np.ndarray]:
    """Every tensor parameter's input array in the parameter's shape (the caller's
    arrays are never aliased by what comes back to be written). R102 when the inputs
    do not name every parameter exactly or an array has the wrong size."""
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
        if arr.size != p.size:
            raise DiagnosticError(error(
                "R102", f"input {p.name} has shape {list(arr.shape)}, the parameter "
                f"{list(p.shape)}", p.span))
        out[p] = arr.reshape(p.shape)
    return out
