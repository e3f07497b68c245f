"""The inverse of an access's index map: for each element of a fragment, the loop
iterations that touch it. A loop reaching an unplaced fragment places it through this
inverse (layout_rules.compose): element y lives wherever the loop runs the iterations that
touch y. TileLang's ParallelOp completes a buffer's fragment the same way, from the
inverse of the access's iterator map with the unused iterators as replication; this is
our own, decided per dimension and then checked on every point.

The index is read in digits of the loop variables: `k`, `k // 2`, `k % 2`,
`(k // 2) % 4` are digits (v // weight) % extent of k. Each dimension of the index is
either free of loop variables (a serial loop variable, a block index, a constant: every
holder keeps that dimension whole, one slot per index) or an affine sum of digits whose
coefficients form a mixed radix: `i + 2*k` with i in [0, 2), `2*i + k`, `j + c`,
`31 - j`, `2*j`, `(k % 2)*8 + k // 2`, also with gaps between the digits: `12*i + k`
over k < 5 (issue #12: one row read by several loops, each over a part of every
cell's columns). Digit t of y is ((y - c) // coefficient_t) % extent_t, counted down
for a negative coefficient; where a coefficient above is no multiple of coefficient_t *
extent_t, the digit is read inside the window of y - c that the digits above leave
(its modulo by each coefficient above). The digits of a loop variable the
index leaves out (all of an unused variable, or `k // 2` when only `k % 2` is read)
replicate the element over their values. Any other map (a digit read twice, digits that
overlap as `i + k` over 2×2 do, a loop variable beside a context variable, a product, a
division that does not split a variable into digits) has no inverse here: the loop does
not place the fragment, and its other users do (where they cannot agree, R300 names
both demands).

An element the loop never touches (`x_frag[j + 2]` leaves columns 0 and 1; `12*i + k`
over k < 5 leaves columns 5..11 of each 12) is mapped onto some iteration too, so every
element has holders and the copy that fills the fragment writes each one somewhere; the
`apart` parts (below the lowest digit, in each gap, above the highest) tell it from the
touched element that shares its iteration, so that the two get different slots. A loop
over the untouched columns then follows the fragment (codegen.layout)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from verify_reducer.spec.indexexpr import Const, FloorDiv, IndexExpr, Mod, Var, floordiv, linear_terms, mod
from verify_reducer.spec.layout import index_names
from .layout_access import Access

Part = tuple[IndexExpr, int]        # a value over the buffer's index names, and its extent


@dataclass(frozen=True)
class IndexInverse:
    """How a buffer element y relates to the loop: the part of each loop dimension the
    index determines (an expression over the buffer's index names), the buffer
    dimensions no loop variable indexes, the parts that tell untouched elements from
    touched ones, and the digits (loop dimension, weight, extent) of used loop variables
    that the index leaves out. Those digits, and the loop dimensions absent from
    loop_of, replicate the element."""
    loop_of: dict[int, IndexExpr]
    whole: tuple[int, ...]
    apart: tuple[Part, ...] = ()
    spread: tuple[tuple[int, int, int], ...] = ()


@dataclass(frozen=True)
class Digit:
    """(var // weight) % extent: a loop variable is the sum of its digits by weight."""
    var: str
    weight: int
    extent: int

    def of(self, value):
        return (value // self.weight) % self.extent


def kept_inverse(kept: tuple[int | None, ...]) -> IndexInverse:
    """A projection as an inverse: buffer dimension d is loop dimension kept[d], or kept
    whole where kept[d] is None (a T.reduce_* destination, a reducer indexed by bare
    loop variables)."""
    names = index_names(len(kept))
    loop_of = {dim: Var(names[d]) for d, dim in enumerate(kept) if dim is not None}
    return IndexInverse(loop_of, tuple(d for d, dim in enumerate(kept) if dim is None))


def invert_access(access: Access, loop_vars: tuple[str, ...],
                  loop_shape: tuple[int, ...]) -> IndexInverse | None:
    """The inverse of access's index over the loop (loop_vars of loop_shape), or None
    when the index is not one this module inverts (see the module text) or leaves the
    buffer somewhere (the access check reports that)."""
    if access.index is None:
        return None
    shape = access.buffer.shape
    names = index_names(len(shape))
    extents = dict(zip(loop_vars, loop_shape))
    ranges = {v: (0, n - 1) for v, n in extents.items()}   # unit extents fold to 0
    index = tuple(e.simplify(ranges) for e in access.index)
    values: dict[Digit, IndexExpr] = {}
    whole: list[int] = []
    apart: list[Part] = []
    for d, e in enumerate(index):
        if not set(e.free_vars()) & set(loop_vars):
            whole.append(d)
            continue
        found = _invert_dim(e, names[d], shape[d], extents)
        if found is None or set(found[0]) & set(values):
            return None
        values.update(found[0])
        apart.extend(found[1])
    if not _round_trips(index, whole, shape, loop_vars, loop_shape, values, names):
        return None
    return _assemble(values, loop_vars, loop_shape, tuple(whole), tuple(apart))


# ----------------------------------------------------------------------------- one dimension

def _invert_dim(e: IndexExpr, y: str, size: int, extents: dict[str, int]):
    """Each digit e reads as a function of buffer index y (see the module text), and
    the parts that tell apart the ys one iteration is mapped from; None when e is not
    an affine sum of digits of loop variables."""
    atoms, const = linear_terms(e)
    terms: dict[Digit, int] = {}
    for atom, coefficient in atoms.items():
        digit = _digit(atom, extents)
        if digit is None or digit in terms:
            return None
        terms[digit] = coefficient
    for digit, a in terms.items():
        if a < 0:                       # a*g = |a|*(n-1-g) + a*(n-1): g counted down
            const += a * (digit.extent - 1)
    order = sorted(terms, key=lambda g: abs(terms[g]))
    coefficients = [abs(terms[g]) for g in order]
    rel = Var(y) - const
    ranges = {y: (0, size - 1)}
    values, parts = {}, []
    window = rel                        # rel without the digits above the current one
    for t in reversed(range(len(order))):
        digit, a, n = order[t], coefficients[t], order[t].extent
        above = coefficients[t + 1:]
        if above:
            window = mod(window, above[0])
        value = _digit_value(rel, window, a, n, above)
        values[digit] = (n - 1 - value if terms[digit] < 0 else value).simplify(ranges)
        if above and above[0] > a * n:  # a gap: the ys between this digit and the next
            parts.append(floordiv(window, a * n))
    top = coefficients[-1] * order[-1].extent
    parts += [floordiv(rel, top), mod(window, coefficients[0])]
    parts = [_part(p, y, size) for p in parts]
    return values, [p for p in parts if p is not None]


def _digit_value(rel: IndexExpr, window: IndexExpr, a: int, n: int,
                 above: list[int]) -> IndexExpr:
    """The digit of coefficient a and extent n. When a*n divides every coefficient
    above (a tight mixed radix, or gaps in whole multiples: `10*i + k` over k < 5),
    the digits above add multiples of n to rel // a, and the digit is (rel // a) % n.
    Otherwise (`12*i + k` over k < 5: columns 5..11 of each 12 are untouched, and 12
    adds 2 to k's count mod 5) it is read inside the window, rel with the digits above
    taken off by the modulo of each coefficient above: (window // a) % n is the digit
    of a touched y (the digits below it stay under a), and folds an untouched one onto
    some value of the digit, a gap part keeping the two apart."""
    if all(c % (a * n) == 0 for c in above):
        return mod(floordiv(rel, a), n)
    return mod(floordiv(window, a), n)


def _digit(atom: IndexExpr, extents: dict[str, int]) -> Digit | None:
    """atom as a digit of a loop variable — v, v // c, v % c and their nestings, where
    each division or modulo splits the digit below it exactly — else None."""
    if isinstance(atom, Var):
        return Digit(atom.name, 1, extents[atom.name]) if atom.name in extents else None
    if not isinstance(atom, (FloorDiv, Mod)):
        return None
    inner = _digit(atom.a, extents)
    if inner is None or inner.extent % atom.c:
        return None
    if isinstance(atom, FloorDiv):
        digit = Digit(inner.var, inner.weight * atom.c, inner.extent // atom.c)
    else:
        digit = Digit(inner.var, inner.weight, atom.c)
    every = np.arange(extents[digit.var])      # the digit formula is the atom, exactly
    same = np.array_equal(np.broadcast_to(atom.evaluate({digit.var: every}), every.shape),
                          digit.of(every))
    return digit if same else None


def _part(value: IndexExpr, y: str, size: int) -> Part | None:
    """value shifted to start at 0 over y in [0, size), with its extent; None when it
    takes one value only (then it tells nothing apart)."""
    seen = np.broadcast_to(value.evaluate({y: np.arange(size)}), (size,))
    lo, hi = int(seen.min()), int(seen.max())
    if lo == hi:
        return None
    return (value - lo).simplify({y: (0, size - 1)}), hi - lo + 1


# ----------------------------------------------------------------------------- the whole index

def _round_trips(index, whole, shape, loop_vars, loop_shape, values, names) -> bool:
    """Whether every iteration's element lies in the buffer and maps back to the digits
    of that iteration (this rejects overlapping coefficients, which send two iterations
    to one element)."""
    points = np.unravel_index(np.arange(math.prod(loop_shape)), loop_shape)
    n = len(points[0])
    env = dict(zip(loop_vars, points))
    element = {}
    for d, e in enumerate(index):
        if d in whole:
            continue
        y = np.broadcast_to(e.evaluate(env), (n,))
        if (y < 0).any() or (y >= shape[d]).any():
            return False
        element[names[d]] = y
    return all(np.array_equal(np.broadcast_to(value.evaluate(element), (n,)),
                              digit.of(env[digit.var]))
               for digit, value in values.items())


def _assemble(values: dict[Digit, IndexExpr], loop_vars, loop_shape, whole,
              apart) -> IndexInverse | None:
    """Each used loop variable as the sum of its digits by weight, the digits the index
    leaves out spread over replicas; None when a variable's digits overlap or do not
    tile its range."""
    loop_of: dict[int, IndexExpr] = {}
    spread: list[tuple[int, int, int]] = []
    for dim, (v, n) in enumerate(zip(loop_vars, loop_shape)):
        used = sorted((g for g in values if g.var == v), key=lambda g: g.weight)
        if not used:
            continue
        gaps = _gaps(used, n)
        if gaps is None:
            return None
        total: IndexExpr = Const(0)
        for digit in used:
            total = total + values[digit] * digit.weight
        loop_of[dim] = total
        spread.extend((dim, weight, extent) for weight, extent in gaps)
    return IndexInverse(loop_of, whole, apart, tuple(spread))


def _gaps(used: list[Digit], n: int) -> list[tuple[int, int]] | None:
    """The (weight, extent) of the digits of a variable of extent n below, between and
    above the used ones (sorted by weight); None when used digits overlap or the
    digits do not tile [0, n) exactly."""
    gaps, weight = [], 1
    for digit in used:
        if digit.weight < weight or digit.weight % weight:
            return None
        if digit.weight > weight:
            gaps.append((weight, digit.weight // weight))
        weight = digit.weight * digit.extent
    if n % weight:
        return None
    if weight < n:
        gaps.append((weight, n // weight))
    return gaps
