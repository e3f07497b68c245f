"""A seeded generator of mangled programs: valid TileLang sources (the examples and
tests/programs/valid) edited at the byte, token and line level into the malformed,
extreme and half-finished programs a user's editor produces. The tool must answer every
one of them with a verdict or a diagnostic (exit 0, 1, 2 or 3) in bounded time: never an
internal error (exit 4) and never a hang. verify.fuzzing.mangle_run runs them; this module only
writes them.

A mangled program is a function of (base seed, number) alone: `mangle_corpus(seeds, n,
base)` is the same list on every machine, so a finding is reproduced by its number.
Programs are bytes, not text: some edits write what no editor would (a NUL, a lone
0xff, a BOM in the middle)."""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

# the constants that broke interpreters before: zero, a negative, the edges of int32,
# a size no machine holds, the edge of int64 and an integer no machine word holds
CONSTANTS = ("0", "-1", "2**31", "2**40", "2**63", "2**256", "1e308", "-0.0")
# the modelled dtypes, then refused ones (an AMD float8, int4) and names TileLang lacks
DTYPES = ("float32", "float16", "bfloat16", "float64", "int8", "int32", "int64", "uint8",
          "uint32", "bool", "float8_e4m3fn", "float8_e5m2", "float8_e5m2fnuz", "int4",
          "complex64", "void")
OPS = ("sum", "max", "min", "product", "prod", "bitand", "bitor", "bitxor", "and", "or",
       "sub", "mean", "absmax", "")
REDUCER_CALLS = ("alloc_reducer", "reducer_init", "reducer_update", "finalize_reducer",
                 "T.fill", "T.clear", "+=", "T.copy")
DEPTHS = (20, 99, 150, 400, 1200, 5000)
ODD_BYTES = (b"\x00", b"\xff", b"\xef\xbb\xbf", b"\t", b"\r", b"\\", b"\xc3\xa9", b"(",
             b")", b"[", b":", b"\n", b" ", b"#", b'"', b"'", b"0", b"9", b".")

_NUMBER = re.compile(rb"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
_DTYPE = re.compile(rb"\b(?:u?int\d+|float\d+|bfloat16|bool)\b")
_OP = re.compile(rb"""op\s*=\s*["'](\w*)["']""")
_TOKEN = re.compile(rb"""#[^\n]*|[A-Za-z_]\w*|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|"[^"\n]*"|'[^'\n]*'"""
                    rb"|\*\*|//|==|!=|<=|>=|->|\+=|-=|\*=|[-+*/%<>=()\[\]{},.:@~&|^]")


@dataclass(frozen=True)
class Mangled:
    number: int
    seed_name: str              # the program it started from
    edits: tuple[str, ...]      # what was done, in order ("constant 2**40", ...)
    source: bytes

    @property
    def name(self) -> str:
        return f"mangled_{self.number:06d}"


def seed_programs(root: Path) -> list[tuple[str, bytes]]:
    """The starting points: every example and every valid test program, by name."""
    paths = sorted([*root.glob("examples/*.py"), *root.glob("tests/programs/valid/*.py")])
    return [(str(p.relative_to(root)), p.read_bytes()) for p in paths]


def mangle_corpus(seeds: list[tuple[str, bytes]], count: int, base: int = 0,
                  start: int = 0) -> list[Mangled]:
    return [mangle_one(seeds, base, n) for n in range(start, start + count)]


def mangle_one(seeds: list[tuple[str, bytes]], base: int, number: int) -> Mangled:
    """Program `number` of the corpus with seed `base`: one to three edits of one seed
    program. String seeds hash the same in every Python process (random.seed v2)."""
    rng = random.Random(f"mangle:{base}:{number}")
    seed_name, source = rng.choice(seeds)
    edits = []
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        kind = rng.choices(list(EDITS), weights=[w for w, _ in EDITS.values()])[0]
        source, what = EDITS[kind][1](source, rng)
        edits.append(what)
    return Mangled(number, seed_name, tuple(edits), source)


# ----------------------------------------------------------------------------- byte edits

def byte_edit(src: bytes, rng: random.Random) -> tuple[bytes, str]:
    at = rng.randrange(len(src) + 1)
    how = rng.choice(("delete", "insert", "replace", "duplicate"))
    if how == "insert" or not src:
        b = rng.choice(ODD_BYTES)
        return src[:at] + b + src[at:], f"insert {b!r} at byte {at}"
    at = min(at, len(src) - 1)
    if how == "delete":
        return src[:at] + src[at + 1:], f"delete byte {at}"
    if how == "duplicate":
        return src[:at] + src[at:at + 1] * 2 + src[at + 1:], f"duplicate byte {at}"
    b = rng.choice(ODD_BYTES)
    return src[:at] + b + src[at + 1:], f"replace byte {at} with {b!r}"


def truncate(src: bytes, rng: random.Random) -> tuple[bytes, str]:
    at = rng.randrange(len(src) + 1)
    return src[:at], f"truncate at byte {at}"


def bom(src: bytes, rng: random.Random) -> tuple[bytes, str]:
    return b"\xef\xbb\xbf" + src, "prepend a BOM"


# ----------------------------------------------------------------------------- token edits

def _tokens(src: bytes) -> list[tuple[int, int]]:
    """Byte spans of the source's tokens (names, numbers, strings, operators; comments
    skipped). A regular expression, not `tokenize`: it reads any bytes, and the corpus
    stays the same under every Python version."""
    return [m.span() for m in _TOKEN.finditer(src) if not m.group().startswith(b"#")]


def token_edit(src: bytes, rng: random.Random) -> tuple[bytes, str]:
    spans = _tokens(src)
    if not spans:
        return byte_edit(src, rng)
    a, b = rng.choice(spans)
    tok = src[a:b]
    how = rng.choice(("delete", "duplicate", "replace", "swap"))
    if how == "delete":
        return src[:a] + src[b:], f"delete token {tok!r} at byte {a}"
    if how == "duplicate":
        return src[:a] + tok + b" " + src[a:], f"duplicate token {tok!r} at byte {a}"
    c, d = rng.choice(spans)
    other = src[c:d]
    if how == "replace":
        return src[:a] + other + src[b:], f"replace token {tok!r} at byte {a} with {other!r}"
    if (c, d) < (a, b):
        (a, b), (c, d) = (c, d), (a, b)
    if b > c:
        return src, "swap of overlapping tokens (no change)"
    return (src[:a] + src[c:d] + src[b:c] + src[a:b] + src[d:],
            f"swap tokens at bytes {a} and {c}")


def _swap_one(src: bytes, rng: random.Random, pattern, choices, group: int, what: str,
              otherwise) -> tuple[bytes, str]:
    """Replace group `group` of one random match of pattern with a random choice;
    `otherwise(src, rng)` when nothing matches."""
    found = list(pattern.finditer(src))
    if not found:
        return otherwise(src, rng)
    m = rng.choice(found)
    new = rng.choice(choices).encode()
    return (src[:m.start(group)] + new + src[m.end(group):],
            f"{what} {m.group(group).decode()} at byte {m.start(group)} -> {new.decode()}")


def constant_swap(src: bytes, rng: random.Random) -> tuple[bytes, str]:
    return _swap_one(src, rng, _NUMBER, CONSTANTS, 0, "constant", token_edit)


def dtype_swap(src: bytes, rng: random.Random) -> tuple[bytes, str]:
    return _swap_one(src, rng, _DTYPE, DTYPES, 0, "dtype", token_edit)


def op_swap(src: bytes, rng: random.Random) -> tuple[bytes, str]:
    return _swap_one(src, rng, _OP, OPS, 1, "op", dtype_swap)


# ----------------------------------------------------------------------------- line edits

def _lines(src: bytes) -> list[bytes]:
    return src.splitlines(keepends=True)


def line_edit(src: bytes, rng: random.Random) -> tuple[bytes, str]:
    lines = _lines(src)
    if not lines:
        return byte_edit(src, rng)
    i = rng.randrange(len(lines))
    how = rng.choice(("delete", "duplicate", "swap", "indent", "dedent"))
    if how == "delete":
        del lines[i]
    elif how == "duplicate":
        lines.insert(i, lines[i])
    elif how == "swap" and i + 1 < len(lines):
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif how == "indent":
        lines[i] = b"    " + lines[i]
    elif lines[i].startswith(b"    "):
        lines[i] = lines[i][4:]
    return b"".join(lines), f"{how} line {i + 1}"


def reducer_line_edit(src: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Delete or duplicate (up to 8 times) a line that allocates, opens, updates,
    finalizes or copies a reducer: the epoch errors R200–R214 and their interactions."""
    lines = _lines(src)
    hits = [i for i, line in enumerate(lines) if any(w.encode() in line for w in REDUCER_CALLS)]
    if not hits:
        return line_edit(src, rng)
    i = rng.choice(hits)
    if rng.random() < 0.4:
        del lines[i]
        return b"".join(lines), f"delete reducer line {i + 1}"
    times = rng.choice((1, 1, 2, 8))
    lines[i:i + 1] = [lines[i]] * (times + 1)
    return b"".join(lines), f"repeat reducer line {i + 1} {times} more time(s)"


# ----------------------------------------------------------------------------- deep nesting

def nest_expression(src: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Replace a number n with a deep expression of the same value: parentheses, a
    `+ 0` chain, unary minus pairs, an `and`/`or` chain or nested conditionals."""
    found = list(_NUMBER.finditer(src))
    if not found:
        return nest_block(src, rng)
    m = rng.choice(found)
    n, depth = m.group(), rng.choice(DEPTHS)
    how = rng.choice(("parens", "sum", "unary", "and", "or", "ifexp", "compare"))
    if how == "parens":
        new = b"(" * depth + n + b")" * depth
    elif how == "sum":
        new = n + b" + 0" * depth
    elif how == "unary":
        new = b"- " * (2 * (depth // 2)) + n
    elif how == "and":
        new = b"(" + b"1 and " * depth + n + b")"
    elif how == "or":
        new = b"(" + b"0 or " * depth + n + b")"
    elif how == "ifexp":
        new = b"(" + b"(" * depth + n + b" if 1 else 0)" * depth + b")"
    else:
        new = b"(" + b"0 < " * depth + n + b")"
    return src[:m.start()] + new + src[m.end():], f"nest {how} x{depth} at byte {m.start()}"


def nest_block(src: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Wrap an indented statement line in `depth` nested `if` or serial-loop blocks."""
    lines = _lines(src)
    body = [i for i, line in enumerate(lines) if line.startswith(b"        ") and line.strip()
            and not line.strip().startswith(b"#")]
    if not body:
        return line_edit(src, rng)
    i = rng.choice(body)
    depth = rng.choice((3, 20, 99, 120))
    indent = len(lines[i]) - len(lines[i].lstrip(b" "))
    head = rng.choice((b"if 1 < 2:", b"for _n in T.serial(1):", b"if True:"))
    wrapped = [b" " * (indent + k) + head + b"\n" for k in range(depth)]
    wrapped.append(b" " * (indent + depth) + lines[i].lstrip(b" "))
    lines[i:i + 1] = wrapped
    return b"".join(lines), f"nest line {i + 1} in {depth} blocks {head.decode()!r}"


# the edits and their weights: the ones that keep the program parseable (constants,
# dtypes, ops, reducer lines) are weighted up so the later stages are exercised too
EDITS = {
    "byte": (3, byte_edit),
    "truncate": (1, truncate),
    "bom": (0.3, bom),
    "token": (3, token_edit),
    "constant": (5, constant_swap),
    "dtype": (2, dtype_swap),
    "op": (2, op_swap),
    "line": (2, line_edit),
    "reducer_line": (4, reducer_line_edit),
    "nest_expression": (2, nest_expression),
    "nest_block": (1, nest_block),
}
