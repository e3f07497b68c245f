"""The verdict a program file carries in its leading comment lines (docs/design.md §17):

    # expect: ok
    # expect: inconclusive                (exit 5: an element has no usable bound)
    # expect: error R201 at 14
    # expect: error R101 at 11:9          (line:column, when the column matters)
    # expect: result out=[36.0]
    # input: x=[1, 2, 3, 4, 5, 6, 7, 8]
    # input: x=arange(1, 9)

Directives are read from the comment block at the top of the file (blank lines allowed);
the first line of code ends it. Values are Python literals read with ast.literal_eval,
never executed."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import numpy as np

from verify_reducer.spec.limits import MAX_ELEMENTS, power_of_two

_DIRECTIVE = re.compile(r"#\s*(expect|input)\s*:\s*(.*?)\s*$")
_ERROR = re.compile(r"error\s+(R\d{3})\s+at\s+(\d+)(?::(\d+))?$")
_ASSIGN = re.compile(r"([A-Za-z_]\w*)\s*=\s*(.+)$")
_ARANGE = re.compile(r"arange\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)$")


class ExpectationSyntaxError(ValueError):
    pass


@dataclass
class Expectation:
    ok: bool = False
    inconclusive: bool = False
    errors: list[tuple[str, int, int | None]] = field(default_factory=list)  # code, line, col
    results: dict[str, np.ndarray] = field(default_factory=dict)
    inputs: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def declared(self) -> bool:
        return self.ok or self.inconclusive or bool(self.errors) or bool(self.results)


def _literal_array(text: str, where: str) -> np.ndarray:
    """The array a directive's value denotes. Whether its values suit the parameter is
    verify.oracle.inputs' question; here only its size is capped (before it is built)."""
    m = _ARANGE.match(text)
    if m:
        start, stop = int(m.group(1)), int(m.group(2))
        if stop - start > MAX_ELEMENTS:
            raise ExpectationSyntaxError(
                f"{where}: arange({start}, {stop}) has {stop - start} elements; at most "
                f"{power_of_two(MAX_ELEMENTS)} are supported (docs/limits.md)")
        return np.arange(start, stop)
    try:
        return _exact_array(ast.literal_eval(text))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise ExpectationSyntaxError(f"{where}: not a literal list: "
                                     f"{text[:80]!r}{'...' if len(text) > 80 else ''}") \
            from exc


def _exact_array(value) -> np.ndarray:
    """The literal as an array. Integers past int64 (uint64 values) stay exact: numpy
    alone would make [0, 2**64 - 1] a float64 array and round them."""
    leaves = np.asarray(value, dtype=object).ravel()
    if leaves.size and all(isinstance(v, int) and not isinstance(v, bool) for v in leaves):
        for dtype in (np.int64, np.uint64):
            try:
                return np.asarray(value, dtype=dtype)
            except OverflowError:
                continue
    return np.asarray(value)


def _assignment(text: str, where: str) -> tuple[str, np.ndarray]:
    m = _ASSIGN.match(text)
    if not m:
        raise ExpectationSyntaxError(f"{where}: expected NAME=VALUE, got {text!r}")
    return m.group(1), _literal_array(m.group(2), f"{where}: {m.group(1)}")


def parse_expectation(source: str, path: str = "<string>") -> Expectation:
    exp = Expectation()
    source = source.removeprefix("\ufeff")          # a byte-order mark is not a character
    for lineno, line in enumerate(source.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        m = _DIRECTIVE.match(stripped)
        if not m:
            continue
        kind, body = m.groups()
        where = f"{path}:{lineno}"
        if kind == "input":
            name, value = _assignment(body, where)
            exp.inputs[name] = value
        elif body == "ok":
            exp.ok = True
        elif body == "inconclusive":
            exp.inconclusive = True
        elif _ERROR.match(body):
            code, line_no, col = _ERROR.match(body).groups()
            exp.errors.append((code, int(line_no), int(col) if col else None))
        elif body.startswith("result"):
            name, value = _assignment(body[len("result"):].strip(), where)
            exp.results[name] = value
        else:
            raise ExpectationSyntaxError(f"{where}: unknown directive {body!r}")
    return exp


def unmatched(expected: list[tuple[str, int, int | None]],
              got: list[tuple[str, int, int]]) -> tuple[list, list]:
    """(expected errors nobody reported, reported errors nobody expected): each expected
    (code, line, col) takes one reported error with that code and line, and that column
    when the expectation names one."""
    left = list(got)
    missing = []
    for code, line, col in sorted(expected, key=lambda e: e[2] is None):
        match = next((g for g in left if g[:2] == (code, line)
                      and (col is None or g[2] == col)), None)
        if match is None:
            missing.append((code, line, col))
        else:
            left.remove(match)
    return missing, left
