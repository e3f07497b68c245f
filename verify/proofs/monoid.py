"""The laws of a user-declared reducer op (docs/design.md §22), proved by Z3 on
bit-vectors of the op's dtype, so wrap-around is part of every law:

- identity (left) and identity (right): e ⊕ x = x and x ⊕ e = x for every x — every
  partial starts at e, and a thread or a slot that receives nothing contributes e;
- associative: (x ⊕ y) ⊕ z = x ⊕ (y ⊕ z) — each thread folds its own contributions
  before the collective combines the partials;
- commutative: x ⊕ y = y ⊕ x — every plan reorders: a butterfly lane combines its
  partial with its partner's and the partner the other way round (both must hold the
  same total), and the segmented and transpose all-reduces combine partials of
  different threads in an order unrelated to the iterations'.

Each law is one counterexample query run by codegen.proofs.obligation (three-valued, timed, its
refuting model minimized: smallest magnitudes first, the last operand first, so a
saturating int8 addition shows (127 ⊕ 1) ⊕ -1). A refuted law is R601 with the
counterexample, computed again by the op's numpy face; an unknown is R602 — never a
pass. Results are cached per declaration."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import z3

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import Diagnostic, Note, error
from verify_reducer.spec.ops import reducer_monoid
from verify_reducer.spec.user_ops import UserMonoid

from verify_reducer.codegen.proofs.obligation import DEFAULT_TIMEOUT_MS, PROVED, REFUTED, ProofResult, Query, solve

LAWS = ("identity (left)", "identity (right)", "associative", "commutative")
# minimizing a model term by term costs a solver call per bit of each operand
_MINIMIZED_BITS = 32
TIMEOUT_MS = DEFAULT_TIMEOUT_MS      # per law, as every other obligation


@lru_cache(maxsize=256)
def prove_laws(monoid: UserMonoid) -> tuple[ProofResult, ...]:
    """One ProofResult per law, in LAWS order."""
    return tuple(solve(q, TIMEOUT_MS, minimize=monoid.dtype.bits <= _MINIMIZED_BITS)
                 for q in _queries(monoid))


def _queries(m: UserMonoid) -> list[Query]:
    dtype = m.dtype
    x, y, z = z3.BitVecs("x y z", dtype.bits)
    e = z3.BitVecVal(m.identity_value % (1 << dtype.bits), dtype.bits)

    def op(p, q):
        return m.z3_combine(dtype, p, q)

    def objectives(*terms):
        """|t| for each operand, the last one first, then the signed values."""
        named = list(zip("xyz", terms))[::-1]
        ints = [(label, z3.BV2Int(t, is_signed=dtype.kind == "int")) for label, t in named]
        return [("|" + label + "|", z3.If(v < 0, -v, v)) for label, v in ints] + ints

    show = _Shower(m)
    return [
        Query(f"{m.name}: identity (left)", [op(e, x) != x], objectives(x),
              lambda v: show.identity(v["x"], left=True)),
        Query(f"{m.name}: identity (right)", [op(x, e) != x], objectives(x),
              lambda v: show.identity(v["x"], left=False)),
        Query(f"{m.name}: associative", [op(op(x, y), z) != op(x, op(y, z))],
              objectives(x, y, z), lambda v: show.associative(v["x"], v["y"], v["z"])),
        Query(f"{m.name}: commutative", [op(x, y) != op(y, x)], objectives(x, y),
              lambda v: show.commutative(v["x"], v["y"])),
    ]


class _Shower:
    """A refuting model as a sentence; both sides are computed by the op's numpy face,
    the one the interpreter runs."""

    def __init__(self, m: UserMonoid):
        self.m = m

    def op(self, a: int, b: int) -> int:
        """a ⊕ b; the model's values are already in the dtype's range (BV2Int)."""
        d = self.m.dtype.np
        return int(self.m.ufunc(np.array([a], d), np.array([b], d))[0])

    def identity(self, x: int, left: bool) -> str:
        e = self.m.identity_value
        got = self.op(e, x) if left else self.op(x, e)
        side = f"{e} ⊕ {x}" if left else f"{x} ⊕ {e}"
        return (f"{side} = {got}, not {x}, where ⊕ is {self.m.name}: the declared identity "
                f"{e} is not a {'left' if left else 'right'} identity")

    def associative(self, x: int, y: int, z: int) -> str:
        left = self.op(self.op(x, y), z)
        right = self.op(x, self.op(y, z))
        return (f"({x} ⊕ {y}) ⊕ {z} = {left} but {x} ⊕ ({y} ⊕ {z}) = {right}, where ⊕ "
                f"is {self.m.name}")

    def commutative(self, x: int, y: int) -> str:
        return (f"{x} ⊕ {y} = {self.op(x, y)} but {y} ⊕ {x} = {self.op(y, x)}, where ⊕ is "
                f"{self.m.name}")


def user_ops(func: ir.PrimFunc) -> dict[UserMonoid, list[ir.Buffer]]:
    """The declared ops func's reducers use, each with its reducers, in allocation order."""
    found: dict[UserMonoid, list[ir.Buffer]] = {}
    for stmt in ir.walk(func.kernel.body):
        if isinstance(stmt, ir.Alloc) and stmt.buffer.is_reducer:
            m = reducer_monoid(stmt.buffer.reducer)
            if m is not None and m.is_user and m.supports(stmt.buffer.dtype):
                found.setdefault(m, []).append(stmt.buffer)
    return found


@dataclass
class OpReport:
    """A declared op func uses, the reducers using it and its laws (`check`'s report)."""
    name: str
    dtype: str
    line: int
    reducers: list[str]
    laws: tuple[ProofResult, ...]

    def to_json(self) -> dict:
        return {"name": self.name, "dtype": self.dtype, "line": self.line,
                "reducers": self.reducers, "laws": [p.to_json() for p in self.laws]}


def op_reports(func: ir.PrimFunc) -> list[OpReport]:
    return [OpReport(m.name, m.dtype.name, m.span.line, [b.name for b in buffers],
                     prove_laws(m)) for m, buffers in user_ops(func).items()]


def law_diagnostics(func: ir.PrimFunc) -> list[Diagnostic]:
    """R601 for each refuted law, R602 for each law the solver could not decide, of each
    declared op func uses (once per op, with a note at each reducer using it)."""
    out = []
    for m, buffers in user_ops(func).items():
        uses = [Note(f"reducer `{b.name}` combines with {m.name} here", b.span)
                for b in buffers]
        for law, result in zip(LAWS, prove_laws(m)):
            if result.result == PROVED:
                continue
            if result.result == REFUTED:
                out.append(error(
                    "R601", f"reducer op `{m.name}` ({m.dtype}) is not {_law_text(law)}: "
                    f"{result.counterexample}", m.span, *uses, hint=_hint(law)))
            else:
                out.append(error(
                    "R602", f"reducer op `{m.name}` ({m.dtype}): the {law} law is not "
                    f"proved ({result.counterexample}); an unproved law is never a pass",
                    m.span, *uses,
                    hint="simplify the combine expression, or use a narrower dtype"))
    return out


def _law_text(law: str) -> str:
    return {"identity (left)": "lawful: its identity fails on the left",
            "identity (right)": "lawful: its identity fails on the right"}.get(law, law)


def _hint(law: str) -> str:
    if law.startswith("identity"):
        return ("every partial starts at the identity and threads that receive nothing "
                "contribute it: declare the e with e ⊕ x = x ⊕ e = x for every x")
    if law == "associative":
        return ("a reducer groups contributions in any way (each thread folds its own, "
                "then the partials are combined); a clamped or saturating combine is not "
                "associative — accumulate in a wider dtype and clamp after the finalize")
    return ("every plan combines partials in an order unrelated to the iterations "
            "(a butterfly lane computes x ⊕ y while its partner computes y ⊕ x): make "
            "the combine symmetric, e.g. break ties by the smaller index")
