"""What witness inputs guarantee, measured: the interpreter runs a sample of blocks and
every finalized epoch's contributions are examined per output (verify.oracle.witness)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.dtypes import DType
from verify_reducer.interp import logical
from verify_reducer.interp.exact import exact_sums

# blocks audited: every block of a grid this small, else the first, middle and last
AUDIT_ALL_BLOCKS = 8


@dataclass
class ReducerAudit:
    """What the witness guarantees for one reducer, measured on the audited blocks."""
    reducer: str
    op: str
    dtype: str
    epochs: int = 0
    outputs: int = 0                 # outputs with at least one contribution
    contributions: int = 0
    exact: bool = True               # every output exact in every order (bound 0)
    dropped_visible: int = 0         # contributions whose loss changes their output
    duplicated_visible: int | None = 0   # None: an idempotent op hides duplicates
    distinct: bool = True            # the contributions of each output pairwise differ

    @property
    def all_visible(self) -> bool:
        return self.dropped_visible == self.contributions

    def to_json(self) -> dict:
        return {"reducer": self.reducer, "op": self.op, "dtype": self.dtype,
                "epochs": self.epochs, "outputs": self.outputs,
                "contributions": self.contributions, "exact": self.exact,
                "dropped_visible": self.dropped_visible,
                "duplicated_visible": self.duplicated_visible, "distinct": self.distinct}

    def describe(self) -> str:
        dup = "" if self.duplicated_visible is None else \
            f", {self.duplicated_visible} if duplicated"
        return (f"{self.reducer} ({self.op}, {self.dtype}): {self.contributions} "
                f"contributions to {self.outputs} output(s) in {self.epochs} epoch(s); "
                f"{self.dropped_visible} visible if dropped{dup}; "
                f"{'exact in every order' if self.exact else _NOT_EXACT}; "
                f"{'distinct per output' if self.distinct else 'repeated values'}")


# the audit's words for a reducer whose witness sums cannot all be exact (its dtype has
# no room for that many contributions)
_NOT_EXACT = ("NOT exact in every order (judged by the bound; an element whose bound is "
              "vacuous is inconclusive)")


def _audit_epoch(audit: ReducerAudit, c: logical.Contributions) -> None:
    flat, values = c.flat.astype(np.int64), c.values
    size = c.bound.size
    counts = np.bincount(flat, minlength=size)
    audit.epochs += 1
    audit.outputs += int((counts > 0).sum())
    audit.contributions += len(flat)
    touched = counts > 0
    exact_out = c.bound == 0
    audit.exact &= bool(exact_out[touched].all())
    if len(flat) == 0:
        return
    order = np.lexsort((values, flat))
    sf, sv = flat[order], values[order]
    same = (sf[1:] == sf[:-1]) & (sv[1:] == sv[:-1])
    if c.dtype.is_float:
        same &= ~np.isnan(sv[1:].astype(np.float64))
    audit.distinct &= not bool(same.any())
    dropped, duplicated = _visible(c, flat, values, counts, exact_out)
    audit.dropped_visible += int(dropped.sum())
    if duplicated is None:
        audit.duplicated_visible = None
    elif audit.duplicated_visible is not None:
        audit.duplicated_visible += int(duplicated.sum())


def _visible(c: logical.Contributions, flat, values, counts, exact_out):
    """Per contribution: would dropping it change its output (and duplicating it)?"""
    op, dtype = c.op, c.dtype
    size = counts.size
    if c.monoid is not None and c.monoid.is_user:
        return _visible_declared(c.monoid, flat, values)
    if op == "sum":
        nonzero = values != 0
        if not dtype.is_float:
            return nonzero, nonzero
        seen = exact_out[flat] & nonzero
        mags = np.abs(values.astype(np.float64))
        top = np.zeros(size)
        with np.errstate(invalid="ignore"):     # a NaN contribution (log of a negative)
            np.maximum.at(top, flat, mags)      # leaves its output's top NaN, as IEEE says
        extra = exact_sums(dtype, np.concatenate([flat, np.arange(size)]),
                           np.concatenate([values.astype(np.float64), top]), None, size)
        return seen, seen & extra[flat]
    if op == "bitxor":
        nonzero = values != 0
        return nonzero, nonzero
    if op in ("bitor", "bitand"):
        bits = _bit_matrix(values, dtype)
        if op == "bitand":
            bits = ~bits
        per_output = np.zeros((size, bits.shape[1]), dtype=np.int64)
        np.add.at(per_output, flat, bits.astype(np.int64))
        return (bits & (per_output[flat] == 1)).any(axis=1), None
    if op in ("max", "min"):
        v = values.astype(np.float64)
        best = np.full(size, -np.inf if op == "max" else np.inf)
        (np.maximum if op == "max" else np.minimum).at(best, flat, v)
        is_best = v == best[flat]
        ties = np.bincount(flat, weights=is_best.astype(np.float64), minlength=size)
        return is_best & (ties[flat] == 1), None
    # product
    v = values.astype(np.float64)
    zeros = np.bincount(flat, weights=(v == 0).astype(np.float64), minlength=size)
    if dtype.is_float:
        ok = exact_out[flat]
        dropped = ok & (((zeros[flat] == 0) & (v != 1)) | ((zeros[flat] == 1) & (v == 0)))
        return dropped, ok & (zeros[flat] == 0) & (v != 1)
    odd = (values.astype(np.int64) & 1) == 1
    all_odd = np.bincount(flat, weights=(~odd).astype(np.float64), minlength=size) == 0
    seen = all_odd[flat] & (values != 1)
    return seen, seen


def _visible_declared(monoid, flat: np.ndarray, values: np.ndarray):
    """For a declared op nothing is known but its laws: per contribution, the combine of
    the rest of its output (before ⊕ after, exclusive prefix and suffix folds within each
    output) is compared with the total, and the total ⊕ the contribution with the total."""
    dtype = monoid.dtype
    order = np.argsort(flat, kind="stable")
    f, v = flat[order], np.asarray(values, dtype.np)[order]
    n = len(f)
    index = np.arange(n)
    first = np.maximum.accumulate(np.where(np.r_[True, f[1:] != f[:-1]], index, 0))
    last = np.minimum.accumulate(np.where(np.r_[f[1:] != f[:-1], True], index, n)[::-1])[::-1]
    before = np.full(n, monoid.identity_value, dtype.np)
    after = np.full(n, monoid.identity_value, dtype.np)
    for step in range(1, int((index - first).max(initial=0)) + 1):
        at = np.flatnonzero(index - first == step)
        before[at] = monoid.combine(dtype, before[at - 1], v[at - 1])
    for step in range(1, int((last - index).max(initial=0)) + 1):
        at = np.flatnonzero(last - index == step)
        after[at] = monoid.combine(dtype, v[at + 1], after[at + 1])
    rest = monoid.combine(dtype, before, after)
    total = monoid.combine(dtype, before, monoid.combine(dtype, v, after))
    dropped, duplicated = np.empty(n, bool), np.empty(n, bool)
    dropped[order] = rest != total
    duplicated[order] = monoid.combine(dtype, total, v) != total
    return dropped, duplicated


def _bit_matrix(values: np.ndarray, dtype: DType) -> np.ndarray:
    unsigned = values.view(np.dtype(f"uint{dtype.bits}")).astype(np.uint64)
    shifts = np.arange(dtype.bits, dtype=np.uint64)
    return ((unsigned[:, None] >> shifts[None, :]) & np.uint64(1)).astype(bool)


def audit_blocks(func: ir.PrimFunc) -> list[tuple[int, ...]]:
    grid = func.kernel.grid
    total = int(np.prod(grid, dtype=np.int64))
    if total <= AUDIT_ALL_BLOCKS:
        return [tuple(int(i) for i in b) for b in np.ndindex(*grid)]
    picks = sorted({0, total // 2, total - 1})
    return [tuple(int(i) for i in np.unravel_index(k, grid)) for k in picks]


def run_audit(func: ir.PrimFunc, values: dict[str, np.ndarray],
              blocks) -> tuple[list[ReducerAudit], dict[str, int]]:
    """The audit of every reducer on the blocks, and each one's most contributions to
    one output in one epoch. DiagnosticError when the interpreter refuses the program."""
    audits: dict[str, ReducerAudit] = {}
    most: dict[str, int] = {}

    def observe(c: logical.Contributions) -> None:
        name = c.record.reducer
        audit = audits.setdefault(name, ReducerAudit(name, c.op, c.dtype.name))
        _audit_epoch(audit, c)
        if c.flat.size:
            most[name] = max(most.get(name, 0), int(np.bincount(c.flat).max()))

    logical.run(func, values, blocks, observe=observe)
    return list(audits.values()), most
