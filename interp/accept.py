"""The acceptance test every backend's output is judged by: a value matches the reference
when it lies within the reference's error bound (docs/semantics.md §9). No ad hoc
tolerance.

An element whose bound cannot tell a right answer from a wrong one is not judged at
all: `judgeable` says which, and every verdict that meets one is "inconclusive", never
a pass (docs/semantics.md §11)."""
from __future__ import annotations

import numpy as np


def within_bound(got, exact, bound) -> np.ndarray:
    """Per element: does `got` match the reference value `exact` whose bound is `bound`?

    - integers and bools: exact equality (their bounds are 0; inf marks a value that an
      uncertain float decided, which cannot be judged);
    - floats with bound 0: exact equality (+0 and −0 are equal);
    - NaN matches NaN at the same place; ±inf must be matched by the same infinity;
    - otherwise |got − exact| ≤ bound, computed in float64;
    - +inf (−inf) also matches a finite reference whose interval reaches the dtype's
      largest finite value (its negation): some order of the reduction overflows there
      (`overflow_sides`);
    - an element that is not `judgeable` is accepted here (nothing refutes it) and must
      be counted apart by the caller: it was not checked."""
    got = np.asarray(got)
    exact = np.asarray(exact)
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), exact.shape)
    if got.shape != exact.shape:
        raise ValueError(f"shape {got.shape} does not match the reference's {exact.shape}")
    unjudged = ~judgeable(exact, bound)
    if exact.dtype.kind not in "fc" and got.dtype.kind not in "fc":
        return (got == exact) | unjudged
    g = got.astype(np.float64)
    e = exact.astype(np.float64)
    with np.errstate(invalid="ignore"):
        close = np.abs(g - e) <= bound
    both_nan = np.isnan(g) & np.isnan(e)
    same_inf = np.isinf(e) & (g == e)
    finite_ref = np.isfinite(e)
    up, down = overflow_sides(exact, bound)
    overflowed = (up & (g == np.inf)) | (down & (g == -np.inf))
    return unjudged | both_nan | same_inf | (finite_ref & close) | overflowed


def judgeable(exact, bound) -> np.ndarray:
    """Per element: can the bound tell a right answer from a wrong one? Not when it is
    infinite, nor when [exact − bound, exact + bound] holds every finite value of the
    dtype (every answer would pass)."""
    exact = np.asarray(exact)
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), exact.shape)
    infinite = np.isinf(bound)
    if exact.dtype.kind not in "fc":
        return ~infinite
    up, down = overflow_sides(exact, bound)
    return ~infinite & ~(up & down)


def overflow_sides(exact, bound) -> tuple[np.ndarray, np.ndarray]:
    """Per element: (whether +inf, whether −inf) is a legal result of a finite reference:
    its interval reaches the largest finite value of the storage dtype (or its
    negation). interp.exact widens the bound of a sum or product that some order can
    overflow exactly this far (docs/semantics.md §9)."""
    exact = np.asarray(exact)
    shape = exact.shape
    if exact.dtype.kind != "f":
        return np.zeros(shape, bool), np.zeros(shape, bool)
    top = float(np.finfo(exact.dtype).max)
    e = exact.astype(np.float64)
    b = np.broadcast_to(np.asarray(bound, dtype=np.float64), shape)
    finite = np.isfinite(e) & (b > 0)
    with np.errstate(all="ignore"):
        return finite & (e + b >= top), finite & (e - b <= -top)


def judge(got, exact, bound, where=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per element, in exact's shape: (accepted, not judged, an overflow some order
    reaches), the three facts a comparison reports. `where` (a boolean mask) restricts
    the judgment to those elements: the others are accepted, judged and not overflowed
    without being looked at. A window run judges only the elements either side wrote,
    which for a block that streams a large read-only window is a few of its millions
    (an element outside the mask would be accepted anyway: the answer is the same).
    ValueError when got's shape is not exact's."""
    got = np.asarray(got)
    exact = np.asarray(exact)
    if got.shape != exact.shape:
        raise ValueError(f"shape {got.shape} does not match the reference's {exact.shape}")
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), exact.shape)
    accepted = np.ones(exact.shape, dtype=bool)
    unjudged = np.zeros(exact.shape, dtype=bool)
    overflow = np.zeros(exact.shape, dtype=bool)
    if where is None:
        # every element, a slab of rows at a time: in place (a gather would copy each
        # array), and each float64 temporary the size of a slab, not of the tensor
        rows = max(1, _JUDGED_AT_ONCE // max(1, exact[:1].size)) if exact.ndim else 1
        for first in range(0, len(exact) if exact.ndim else 1, rows):
            part = slice(first, first + rows) if exact.ndim else ()
            accepted[part], unjudged[part], overflow[part] = \
                _judged(got[part], exact[part], bound[part])
        return accepted, unjudged, overflow
    if where.any():
        accepted[where], unjudged[where], overflow[where] = \
            _judged(got[where], exact[where], bound[where])
    return accepted, unjudged, overflow


_JUDGED_AT_ONCE = 1 << 20      # elements judged together by `judge`


def _judged(got, exact, bound) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    accepted = within_bound(got, exact, bound)
    unjudged = ~judgeable(exact, bound)
    up, down = overflow_sides(exact, bound)
    return accepted, unjudged, (up | down) & ~unjudged


def unjudged_reason(exact: float, bound: float) -> str:
    """Why one element was not judged, for the reports."""
    if np.isinf(bound):
        return "its bound is infinite"
    return f"its bound {bound:.3g} admits every finite value (some order overflows " \
           f"to +inf and another to -inf)"
