"""The one table of `T.<func>` math intrinsics: the frontend reads their arity and
whether they need a float operand, the interpreter their numpy function and library ulp
allowance, the CUDA renderer their C name. A new intrinsic is one row here.

These are the function rows of the operator table (spec.operators.CALLS reaches them):
they stay a table of their own because their columns are a function's (arity, float-only,
CUDA's ulp allowance), not an operator's, and the frontend reads them by name."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Intrinsic:
    name: str
    arity: int
    float_only: bool             # an integer operand is an error (T.exp of an int32)
    numpy: Callable | None       # the float meaning; None: the evaluator's own rule
    c_name: str | None           # CUDA's double-precision name ("f" is added for float);
                                 # None: the renderer composes it (sigmoid)
    cuda_ulps: int               # CUDA's documented max ulp error (CUDA C Programming
                                 # Guide, Mathematical Functions, no --use_fast_math) + 1
                                 # for numpy's own error; 0 where both are exact
    numpy_int: Callable | None = None   # the integer meaning (max/min/abs); None: floats only
    interval: Callable | None = None    # ((lo, hi), (lo, hi)) -> (lo, hi): the integer
                                        # analyses' range rule (numbers or arrays)
    z3_int: Callable | None = None      # (a, b) on Z3 integers


def _pick(scalar, array):
    """max or min of two range ends: Python numbers (exact) or per-block arrays."""
    def pick(x, y):
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            return array(x, y)
        return scalar(x, y)
    return lambda a, b: (pick(a[0], b[0]), pick(a[1], b[1]))


def _z3_extremum(keep_a: str):
    def term(a, b):
        import z3
        return z3.If(a >= b if keep_a == ">=" else a <= b, a, b)
    return term


def _rsqrt(x):
    return 1 / np.sqrt(x)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


INTRINSICS: dict[str, Intrinsic] = {i.name: i for i in [
    Intrinsic("exp", 1, True, np.exp, "exp", 3),
    Intrinsic("exp2", 1, True, np.exp2, "exp2", 3),
    Intrinsic("log", 1, True, np.log, "log", 2),
    Intrinsic("log2", 1, True, np.log2, "log2", 2),
    Intrinsic("sqrt", 1, True, np.sqrt, "sqrt", 1),
    Intrinsic("rsqrt", 1, True, _rsqrt, "rsqrt", 3),
    Intrinsic("floor", 1, True, np.floor, "floor", 0),
    Intrinsic("ceil", 1, True, np.ceil, "ceil", 0),
    Intrinsic("tanh", 1, True, np.tanh, "tanh", 3),
    Intrinsic("sigmoid", 1, True, _sigmoid, None, 5),
    Intrinsic("pow", 2, True, np.power, "pow", 5),
    # max/min/abs also take integers; their float forms follow CUDA's fmax/fmin/fabs
    Intrinsic("max", 2, False, np.fmax, "fmax", 0, np.maximum, _pick(max, np.maximum),
              _z3_extremum(">=")),
    Intrinsic("min", 2, False, np.fmin, "fmin", 0, np.minimum, _pick(min, np.minimum),
              _z3_extremum("<=")),
    Intrinsic("abs", 1, False, np.abs, "fabs", 0, np.abs),
]}

# The unary float functions: monotone pieces the interpreter bounds by their endpoints.
UNARY_FLOAT = tuple(n for n, i in INTRINSICS.items() if i.arity == 1 and i.float_only)
