"""The generator's expressions: each node renders itself as TileLang source and evaluates
itself with numpy over the loop variables, so a program's expected result comes from the
same description its text does, never from our interpreter.

The numpy side holds every value exactly: integers as int64 wrapped to their dtype's range,
floats as float64. The generator keeps float values small integers (see `bound`), so no
rounding happens anywhere and the expected result is exact in every dtype."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

INT_BITS = {"int8": (8, True), "int32": (32, True), "uint32": (32, False)}
FLOATS = ("float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2")


def wrap(values: np.ndarray, dtype: str) -> np.ndarray:
    """Integer values as dtype holds them (two's complement wrap), in int64."""
    bits, signed = INT_BITS[dtype]
    v = np.asarray(values).astype(np.int64) & ((1 << bits) - 1)
    if signed:
        v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    return v


class Expr:
    def text(self) -> str:
        raise NotImplementedError

    def eval(self, env: dict) -> np.ndarray:
        raise NotImplementedError

    def bound(self) -> int:
        """The largest magnitude the expression can take (the generator's exactness budget)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Var(Expr):
    name: str
    extent: int = 1

    def text(self):
        return self.name

    def eval(self, env):
        return env[self.name]

    def bound(self):
        return self.extent


@dataclass(frozen=True)
class Const(Expr):
    value: int

    def text(self):
        return str(self.value)

    def eval(self, env):
        return np.int64(self.value)

    def bound(self):
        return abs(self.value)


@dataclass(frozen=True)
class Bin(Expr):
    op: str                   # "+", "-", "*", "//", "%"
    a: Expr
    b: Expr

    def text(self):
        return f"{_paren(self.a)} {self.op} {_paren(self.b)}"

    def eval(self, env):
        a, b = self.a.eval(env), self.b.eval(env)
        return {"+": np.add, "-": np.subtract, "*": np.multiply, "//": np.floor_divide,
                "%": np.remainder}[self.op](a, b)

    def bound(self):
        return self.a.bound() * self.b.bound() if self.op == "*" else \
            self.a.bound() + self.b.bound()


@dataclass(frozen=True)
class Less(Expr):
    a: Expr
    b: Expr

    def text(self):
        return f"{self.a.text()} < {self.b.text()}"

    def eval(self, env):
        return np.less(self.a.eval(env), self.b.eval(env))

    def bound(self):
        return 1


@dataclass(frozen=True)
class Read(Expr):
    """buffer[index] in the source; tensor[global_index] in the model (the fragment or
    shared tile the source reads holds exactly those global elements)."""
    buffer: str
    index: tuple[Expr, ...]
    tensor: str
    global_index: tuple[Expr, ...]
    magnitude: int            # the input's values lie in [-magnitude, magnitude]
    loaded: Expr | None = None    # where the buffer holds the tensor (elsewhere: 0)

    def text(self):
        return f"{self.buffer}[{', '.join(i.text() for i in self.index)}]"

    def eval(self, env):
        data = env["tensors"][self.tensor]
        # clipped: a read under a false condition is never used
        idx = tuple(np.clip(np.asarray(g.eval(env)), 0, n - 1)
                    for g, n in zip(self.global_index, data.shape))
        if self.loaded is None:
            return data[idx]
        return np.where(self.loaded.eval(env), data[idx], 0)

    def bound(self):
        return self.magnitude


@dataclass(frozen=True)
class Cast(Expr):
    value: Expr
    dtype: str

    def text(self):
        return f"T.cast({self.value.text()}, T.{self.dtype})"

    def eval(self, env):
        v = self.value.eval(env)
        if self.dtype in FLOATS:
            return np.asarray(v, dtype=np.float64)
        return wrap(np.trunc(np.asarray(v, dtype=np.float64)), self.dtype)

    def bound(self):
        return self.value.bound()


@dataclass(frozen=True)
class Abs(Expr):
    value: Expr

    def text(self):
        return f"T.abs({self.value.text()})"

    def eval(self, env):
        return np.abs(self.value.eval(env))

    def bound(self):
        return self.value.bound()


@dataclass(frozen=True)
class Select(Expr):
    cond: Expr
    then: Expr
    other: Expr

    def text(self):
        return f"T.if_then_else({self.cond.text()}, {self.then.text()}, {self.other.text()})"

    def eval(self, env):
        return np.where(self.cond.eval(env), self.then.eval(env), self.other.eval(env))

    def bound(self):
        return max(self.then.bound(), self.other.bound())


@dataclass(frozen=True)
class Result(Expr):
    """A finalized reducer's value (a consumer reads its producer's result)."""
    buffer: str
    index: tuple[Expr, ...]
    reducer: str
    magnitude: int

    def text(self):
        return f"{self.buffer}[{', '.join(i.text() for i in self.index)}]"

    def eval(self, env):
        return env["results"][self.reducer][tuple(np.asarray(i.eval(env))
                                                 for i in self.index)]

    def bound(self):
        return self.magnitude


def _paren(e: Expr) -> str:
    return f"({e.text()})" if isinstance(e, (Bin, Less)) else e.text()
