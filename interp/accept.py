"""The acceptance test every backend's output is judged by: a value matches the reference
when it lies within the reference's error bound (docs/semantics.md §9). No ad hoc
tolerance."""
from __future__ import annotations

import numpy as np


def within_bound(got, exact, bound) -> np.ndarray:
    """Per element: does `got` match the reference value `exact` whose bound is `bound`?

    - integers and bools: exact equality (their bounds are 0; inf marks a value that an
      uncertain float decided, which cannot be judged and is accepted);
    - floats with bound 0: exact equality (+0 and −0 are equal);
    - NaN matches NaN at the same place; ±inf must be matched by the same infinity;
    - otherwise |got − exact| ≤ bound, computed in float64;
    - bound inf: the reference cannot judge this element, anything is accepted."""
    got = np.asarray(got)
    exact = np.asarray(exact)
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), exact.shape)
    if got.shape != exact.shape:
        raise ValueError(f"shape {got.shape} does not match the reference's {exact.shape}")
    unjudgeable = np.isinf(bound)
    if exact.dtype.kind not in "fc" and got.dtype.kind not in "fc":
        return (got == exact) | unjudgeable
    g = got.astype(np.float64)
    e = exact.astype(np.float64)
    with np.errstate(invalid="ignore"):
        close = np.abs(g - e) <= bound
    both_nan = np.isnan(g) & np.isnan(e)
    same_inf = np.isinf(e) & (g == e)
    finite_ref = np.isfinite(e)
    return unjudgeable | both_nan | same_inf | (finite_ref & close)
