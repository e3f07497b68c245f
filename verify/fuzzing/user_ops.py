"""The fuzzer's user-declared reducer ops (docs/design.md §18, §22): a small table of
lawful combines written as TileLang expressions, each standing in for the built-in op it
computes, so a swapped reducer keeps every other choice of its description (predicate,
input range, tail padding) valid.

The declaration text is the one source of truth: the program renders it, and the numpy
model folds with the `UserMonoid` our own frontend reads from that same text
(spec.user_ops's numpy face), so the model never re-implements a combine."""
from __future__ import annotations

import ast
from dataclasses import replace
from functools import lru_cache

import numpy as np

from verify_reducer.spec.frontend.module import ModuleScan, collect_imports
from verify_reducer.spec.user_ops import UserMonoid

from verify_reducer.verify.fuzzing.grammar import Kernel, Reducer

# built-in op -> (declared name, body over a and b); identities per dtype below
TABLE = {
    "sum": ("wrap_add", "a + b"),
    "bitxor": ("xor_op", "a ^ b"),
    "bitor": ("or_op", "a | b"),
    "bitand": ("and_op", "a & b"),
    "max": ("cond_max", "T.if_then_else(a > b, a, b)"),
    "min": ("cond_min", "T.if_then_else(a < b, a, b)"),
}
IDENTITIES = {
    "int32": {"sum": 0, "bitxor": 0, "bitor": 0, "bitand": -1, "max": -2 ** 31,
              "min": 2 ** 31 - 1},
    "uint32": {"sum": 0, "bitxor": 0, "bitor": 0, "bitand": 2 ** 32 - 1, "max": 0,
               "min": 2 ** 32 - 1},
}
# a separate stream, so the description's other draws stay what they were
STREAM = 0x05E7


def op_name(r: Reducer) -> str:
    """The name a reducer's declared op has in the program (one per dtype and op)."""
    name, _ = TABLE[r.user_op]
    return f"{name}_{r.dtype}"


def declaration(r: Reducer) -> str:
    """The module-level `@T.reducer_op` declaration of a swapped reducer's op."""
    _, body = TABLE[r.user_op]
    identity = IDENTITIES[r.dtype][r.user_op]
    return (f"@T.reducer_op(dtype=T.{r.dtype}, identity={identity})\n"
            f"def {op_name(r)}(a, b):\n    return {body}\n")


def declarations(k: Kernel) -> list[str]:
    """Each distinct declaration the kernel's reducers use, in first-use order."""
    seen: dict[str, str] = {}
    for r in k.reducers:
        if r.user_op is not None:
            seen.setdefault(op_name(r), declaration(r))
    return list(seen.values())


@lru_cache(maxsize=256)         # the recent declarations: a campaign makes thousands
def _monoid(text: str, name: str) -> UserMonoid:
    tree = ast.parse("import tilelang.language as T\n" + text)
    scan = ModuleScan(tree, collect_imports(tree))
    scan.run()
    entry = scan.env.get(name)
    monoid = getattr(entry, "monoid", None)
    if monoid is None:       # the table is ours: a declaration we cannot read is our bug
        raise AssertionError(f"fuzzer user op {name} does not parse: {scan.diagnostics}")
    return monoid


def monoid(r: Reducer) -> UserMonoid:
    return _monoid(declaration(r), op_name(r))


def eligible(r: Reducer) -> bool:
    """A reducer whose op may be swapped: an integer accumulator of a table op on the
    surfaces that name an op (v2, rfc; the legacy surface spells its op as `+=` or a
    fill). A swapped reducer drops its reducer_init seed: the seeds are drawn for the
    built-in ops, and the declared op's identity is what its epoch starts from."""
    return (r.dtype in IDENTITIES and r.op in TABLE and r.surface in ("v2", "rfc")
            and r.user_op is None)


def swap(k: Kernel, probability: float, program_seed) -> Kernel:
    """k with each eligible reducer swapped to its table op with this probability, drawn
    from a generator of its own seeded from the program's seed."""
    if probability <= 0:
        return k
    rng = np.random.default_rng([*np.atleast_1d(program_seed).tolist(), STREAM])
    reducers = []
    for r in k.reducers:
        if eligible(r) and rng.random() < probability:
            r = replace(r, user_op=r.op, seed=None)
        reducers.append(r)
    return replace(k, reducers=tuple(reducers))


def fold(r: Reducer, acc: np.ndarray, cells, values: np.ndarray) -> None:
    """values folded into acc's cells with the declared op's own combine."""
    m = monoid(r)
    store = acc.astype(m.dtype.np).reshape(-1)      # CombineUfunc.at takes flat cells
    flat = np.ravel_multi_index(cells, acc.shape) if cells[0].size else \
        np.zeros(0, np.intp)
    m.ufunc.at(store, flat, values.astype(m.dtype.np))
    acc[...] = store.reshape(acc.shape).astype(acc.dtype)
