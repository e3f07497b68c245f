"""A reducer's life in one block: epochs of contributions, and the state machine that
refuses what has no meaning (docs/semantics.md §4; codes R200–R214 in docs/codes.md).

  fresh ──init──► open ──update*──► open ──finalize──► closed ──init──► open ...

The partials of an open epoch are not readable (R200); an in-place (legacy) finalize
makes the reducer's own storage readable until the next init. Contributions are kept
as they arrive and combined at finalize by `interp.exact`, so a float sum is exact.

An epoch left open when the block ends, or when an init (or a fresh allocation) replaces
it, is R202 only if it holds contributions: those would be lost. One that received none
loses nothing, so the path this block took may skip the finalize (a finalize under a
block-uniform `if` whose other arm contributes nothing); its destination is then simply
not written. The static verifier asks the same of every path (verify.epochs.checker)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from verify_reducer.spec.diagnostics import DiagnosticError, Note, error
from verify_reducer.spec.ir import Buffer
from verify_reducer.spec.ops import MONOIDS, Monoid, reducer_monoid
from verify_reducer.spec.source import Span

from .exact import combine
from .memory import Storage
from .values import Val


@dataclass
class Epoch:
    init_span: Span
    seed: Val | None                       # one value (a scalar seed), in the reducer dtype
    flats: list[np.ndarray] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)
    bounds: list[np.ndarray | None] = field(default_factory=list)
    scope: bytes = b""                     # which threads reached the init
    uncertain_target: bool = False         # an update's index came from an uncertain float
    first_update: Span | None = None       # the update that made the first contribution

    @property
    def contributions(self) -> int:
        return sum(len(f) for f in self.flats)


class ReducerState:
    def __init__(self, buffer: Buffer):
        self.buffer = buffer
        op = buffer.reducer.op
        found = reducer_monoid(buffer.reducer)
        if found is None or not found.supports(buffer.dtype):
            raise DiagnosticError(error(
                "R212", f"reducer {buffer.name}: op {op!r} on {buffer.dtype} is not a "
                f"supported monoid ({', '.join(MONOIDS)} or a declared op of that dtype; "
                f"bitwise ops need integers)", buffer.span))
        self.monoid: Monoid = found
        self.storage = Storage(buffer)     # the in-place result, readable after finalize
        self.epoch: Epoch | None = None
        self.readable = False
        self.last_finalize: Span | None = None

    # ------------------------------------------------------------------ transitions

    def open(self, span: Span, seed: Val | None, scope: bytes) -> None:
        self.check_nothing_lost("is opened again", Note("a new epoch starts here", span))
        self.epoch = Epoch(span, seed, scope=scope)
        self.readable = False

    def check_nothing_lost(self, ending: str, *notes: Note) -> None:
        """R202 when the open epoch ends (`ending`: what ends it) with contributions that
        were never finalized."""
        epoch = self.epoch
        if epoch is None or not epoch.contributions:
            return
        raise DiagnosticError(error(
            "R202", f"the epoch of reducer {self.buffer.name} opened here {ending} with "
            f"{epoch.contributions} contribution(s) never finalized", epoch.init_span,
            Note("the first contribution", epoch.first_update), *notes))

    def update(self, flat: np.ndarray, val: Val, span: Span, uncertain_target: bool) -> None:
        epoch = self.require_open(span, "update")
        if epoch.first_update is None and len(flat):
            epoch.first_update = span
        epoch.flats.append(flat)
        epoch.values.append(val.v)
        epoch.bounds.append(val.b)
        epoch.uncertain_target |= uncertain_target

    def close(self, span: Span):
        """Combine the epoch: (values, bounds, contributions per output, init span)."""
        epoch = self.require_open(span, "finalize")
        dtype = self.buffer.dtype
        size = self.buffer.size
        flat = np.concatenate(epoch.flats) if epoch.flats else np.zeros(0, np.int64)
        values = (np.concatenate(epoch.values) if epoch.values
                  else np.zeros(0, dtype=dtype.np))
        bounds = None
        if any(b is not None for b in epoch.bounds):
            bounds = np.concatenate([np.zeros(len(v)) if b is None else b
                                     for v, b in zip(epoch.values, epoch.bounds)])
        seed = seed_bound = None
        if epoch.seed is not None:
            seed = np.broadcast_to(epoch.seed.v, (size,))
            if epoch.seed.b is not None:
                seed_bound = np.broadcast_to(epoch.seed.b, (size,)).astype(np.float64)
        result, bound, counts = combine(self.monoid, dtype, flat, values, bounds, size,
                                        seed, seed_bound)
        if epoch.uncertain_target:
            bound = np.full(size, np.inf)
        self.epoch = None
        self.last_finalize = span
        return result, bound, counts, epoch.init_span

    # ------------------------------------------------------------------ checks

    def require_open(self, span: Span, what: str) -> Epoch:
        """The open epoch; an update or finalize after a finalize is R201 / R203, before
        any init R204."""
        if self.epoch is not None:
            return self.epoch
        name = self.buffer.name
        if self.last_finalize is not None:
            raise DiagnosticError(error(
                "R201" if what == "update" else "R203",
                f"{what} of reducer {name} after its epoch was finalized",
                span, Note("finalized here", self.last_finalize)))
        raise DiagnosticError(error(
            "R204", f"{what} of reducer {name} outside an open epoch (no init before "
            "it)", span))

    def check_readable(self, span: Span, whole: str | None = None) -> None:
        if self.readable:
            return
        name = self.buffer.name
        if whole is not None:
            raise DiagnosticError(error(
                "R211", f"reducer {name} passed to {whole} while it holds partials (only an "
                "in-place finalized reducer may be read as a buffer)", span))
        if self.epoch is not None:
            raise DiagnosticError(error(
                "R200", f"read of reducer {name} before its epoch is finalized", span,
                Note("the epoch opened here", self.epoch.init_span)))
        if self.last_finalize is not None:
            raise DiagnosticError(error(
                "R200", f"read of reducer {name}: it was finalized into another buffer, "
                "read that one", span, Note("finalized here", self.last_finalize)))
        raise DiagnosticError(error(
            "R200", f"read of reducer {name}, which was never finalized", span))

    def check_writable(self, span: Span, what: str, code: str) -> None:
        """Ordinary writes reach a reducer only while it holds an in-place result."""
        if not self.readable:
            raise DiagnosticError(error(
                code, f"{what} to reducer {self.buffer.name} is not a reducer update "
                "(only T.reducer_update / the legacy update forms may touch it)", span))
