"""Witness inputs: values under which every contribution of a reduction shows in the
exact result, so a backend that drops, duplicates or misroutes one gets a different
answer, not one inside the error bound.

Seeded random inputs are good at finding crashes and races, but poor judges of
exactly-once: with floats in [-1, 1) a row of a 512-long GEMV has a reassociation bound
near 4e-3, and its smallest contribution is far below that, so a backend that loses it
passes. Witness inputs are designed instead, parameter by parameter, from the way the
kernel's reducer updates read them (`roles`), and then audited on the interpreter.

What a parameter holds (a *contribution* is the value passed to `T.reducer_update`):

- read by an update directly (`v = P[...]`, through copies, casts, `T.abs`, a negation
  or a `T.if_then_else` with a constant): for sum, max and min, distinct integers from a
  seeded permutation: any `cycle` consecutive elements (in row-major order) hold
  distinct values, `cycle` a prime at least the number of contributions per output where
  the dtypes allow. Sums get positive values (alternating signs where more
  contributions than the accumulator holds integers would pass 2^p), small enough that
  every partial sum of every order is exact in the accumulator (the interpreter's bound is then 0: `check`
  and `compare` judge exactly); max gets negative values (a partial started at 0 instead
  of -inf shows), min positive ones, both at once distinct magnitudes of both signs.
  Several parameters designed so are interleaved (value·J + lane), so contributions of
  two parameters never coincide. A parameter that a non-linear expression also reads
  (`exp(x - m)`) is scaled into [-1, 1] by a power of two.
- bitor/bitxor: one-hot words (bit t of element f, t cycling over the width), bitand:
  one-cold words; both at once: one-hot in the low half and one-cold in the high half.
- product: powers of two (2, 1/2, -2, -1/2) for floats, odd integers >= 3 for integers
  (units modulo 2^bits, so none is absorbed), or -1 where many contributions could
  leave the dtype's range.
- the two factors of a product of two parameters (GEMV's `A[i, k] * x[k]`): the larger
  parameter gets distinct odd integers, the smaller powers of two 1, 2, 4, 8 cycling, so
  each contribution odd · 2^e is distinct within an output (unique factorization) and a
  wrong factor of either side changes it.
- a tensor that `T.atomic_add` adds floats into (a split-K output): zeros, unless the
  `# input:` lines give it, so the blocks' exact partials stay exact in every order of
  the atomics (a seeded starting value would round each addition);
- everything else (inputs read only by other expressions, indices, outputs): the
  program's `# input:` lines, else the seeded values of `verify.oracle.inputs`.

What is guaranteed is measured, not assumed: `witness` runs the interpreter on a sample
of blocks (every block of a grid of at most 8) and reports per reducer (`ReducerAudit`)
whether each output is exact in every order, how many contributions would change their
output if dropped (sum: nonzero, exact; product: not 1, no zero beside it; bitor: a bit
no other contribution of the output has; bitand: a cleared bit no other has; bitxor:
nonzero; max/min: only the unique extremum, an idempotent op hides the rest) or
duplicated (sum, product, bitxor; never for the idempotent ops), and whether the
contributions of every output are pairwise distinct (then the difference a dropped one
makes names it). Contributions that are constants (`T.reducer_update(cnt[0], 1)`) or
zero padding of a tail tile are counted as they are: they can be invisible.

Witness values decide control flow too: a predicate `x > 0` on positive witness values
is always taken. They aim at visibility, not branch coverage; `check` on seeded inputs
covers the branches."""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

import numpy as np

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import DiagnosticError
from verify_reducer.spec.dtypes import DType

from verify_reducer.verify.oracle import inputs as inputs_mod
from verify_reducer.verify.oracle.cost import estimate
from verify_reducer.verify.oracle.witness_audit import ReducerAudit, audit_blocks, run_audit  # noqa: F401 (API)
from verify_reducer.verify.oracle.witness_roles import Roles, Use, roles  # noqa: F401 (API)

# contributions per output assumed when the interpreter cannot run the program
FALLBACK_COUNT = 4096
_BITWISE = ("bitand", "bitor", "bitxor")


# ----------------------------------------------------------------------------- schemes

@dataclass(frozen=True)
class Scheme:
    """What one parameter holds. kind: distinct | odd | bits | product | powers |
    default. distinct/odd: magnitudes base + (k·lanes + lane) (odd: 2(k·lanes + lane) + 1)
    with sign positive | negative | both, k a seeded permutation of 0..cycle-1 (any
    `cycle` consecutive elements differ), scaled by 2^-shift. bits: mode hot | cold |
    split over `width` bits, bit k of the first `positions` (k beyond them: no bit, a
    sparse cycle), minus `offset` (the update adds it back). product, powers: `values`
    cycling."""
    kind: str
    why: str
    sign: str = "positive"
    cycle: int = 1
    lane: int = 0
    lanes: int = 1
    shift: int = 0
    base: int = 1
    mode: str = ""
    width: int = 0
    positions: int = 0
    offset: int = 0
    values: tuple = ()

    def describe(self) -> str:
        if self.kind in ("distinct", "odd"):
            scale = f" × 2^-{self.shift}" if self.shift else ""
            what = "distinct odd integers" if self.kind == "odd" else "distinct integers"
            sign = {"positive": "", "negative": "negative ", "both": "±"}[self.sign]
            low = 1 if self.kind == "odd" else self.base
            return (f"{sign}{what} {low}..{self.peak()}{scale} (cycle {self.cycle}"
                    + (f", lane {self.lane} of {self.lanes}" if self.lanes > 1 else "")
                    + f"): {self.why}")
        if self.kind == "bits":
            sparse = f", {self.positions} of every {self.cycle} elements" \
                if self.cycle > self.positions else ""
            minus = f", minus {self.offset}" if self.offset else ""
            return f"{self.mode} bits over {self.width} bits{sparse}{minus}: {self.why}"
        if self.kind in ("product", "powers"):
            return f"cycling {list(self.values)}: {self.why}"
        return self.why

    def peak(self) -> int:
        """The largest magnitude before scaling."""
        top = self.cycle * self.lanes
        return 2 * top - 1 if self.kind == "odd" else self.base - 1 + top


def _exact_cap(dtype: DType) -> int:
    """The largest n with every integer 1..n exact in dtype."""
    if dtype.is_bool:
        return 1
    if dtype.is_float:
        return int(round(2 ** -math.log2(dtype.unit_roundoff)))
    return int(dtype.highest)


def _is_prime(k: int) -> bool:
    return k >= 2 and all(k % d for d in range(2, int(math.isqrt(k)) + 1))


def _prime_at_most(n: int) -> int:
    n = int(n)
    for k in range(n, 1, -1):
        if _is_prime(k):
            return k
    return max(n, 1)


def _prime_at_least(n: int) -> int:
    k = max(2, int(n))
    while not _is_prime(k):
        k += 1
    return k


def _cycle(limit: int, need: int) -> int:
    """A prime cycle length: the largest prime <= min(limit, max(2 * need, 256)), so
    outputs of need contributions see distinct values where the limit allows."""
    return _prime_at_most(max(1, min(limit, max(2 * need, 256))))


def choose_schemes(func: ir.PrimFunc, found: Roles,
                   counts: dict[str, int]) -> dict[str, Scheme]:
    """A scheme per parameter from its roles and the contributions per output of each
    reducer (counts, the seed counted)."""
    params = {p.name: p for p in func.params}
    schemes: dict[str, Scheme] = {}
    designed = []
    for p in func.params:
        if p.name in found.index:
            schemes[p.name] = Scheme("default", "reaches an index or loop bound: kept as "
                                     "the program's or seeded values")
            continue
        uses = found.uses[p.name]
        strong = [u for u in uses if u.kind in ("direct", "varying")]
        if not strong and not any(u.kind == "scale" for u in uses):
            why = "read only by other expressions" if uses else "read by no update"
            schemes[p.name] = Scheme("default", why + ": the program's or seeded values")
            continue
        designed.append(p.name)
    distinct_like = []
    for name in designed:
        p = params[name]
        uses = found.uses[name]
        strong = [u for u in uses if u.kind in ("direct", "varying")]
        ops = {u.op for u in strong}
        if any(u.kind == "varying" for u in strong) or ops & {"sum", "max", "min"}:
            distinct_like.append(name)
        elif ops & set(_BITWISE) and p.dtype.is_int:
            schemes[name] = _bits_scheme(p, strong, counts)
        elif "product" in ops:
            schemes[name] = _product_scheme(p, strong, counts)
        elif strong:
            distinct_like.append(name)
    lanes = max(1, len(distinct_like))
    order = {p.name: i for i, p in enumerate(func.params)}
    for lane, name in enumerate(distinct_like):
        schemes[name] = _distinct_scheme(params[name], found.uses[name], counts, lane, lanes)
    for name in designed:
        if name not in schemes:                          # scale only
            schemes[name] = _powers_scheme(params[name], found.uses[name], counts, schemes)
    return dict(sorted(schemes.items(), key=lambda item: order[item[0]]))


def _need(uses: list[Use], counts: dict[str, int]) -> int:
    return max([counts.get(u.reducer, FALLBACK_COUNT) for u in uses] or [1])


def _why(uses: list[Use], kinds: bool = True) -> str:
    return "read by " + ", ".join(sorted({f"{u.op} {u.reducer}" + (f" ({u.kind})" if kinds
                                                                  else "") for u in uses}))


def _distinct_scheme(p: ir.Buffer, uses: list[Use], counts, lane: int,
                     lanes: int) -> Scheme:
    strong = [u for u in uses if u.kind in ("direct", "varying")]
    ops = {u.op for u in strong}
    odd = any(u.kind == "varying" for u in strong)
    if "sum" in ops or odd or p.dtype.kind == "uint" or p.dtype.is_bool:
        sign = "positive"
    elif ops == {"max"}:
        sign = "negative"
    elif ops == {"min"}:
        sign = "positive"
    else:
        sign = "both"
    # A float sum of more contributions than its dtype holds integers (a bfloat16 sum of
    # 300) cannot stay exact on positive values: alternating signs keep the positive
    # and the negative part each within 2^p (docs/semantics.md §9), every term nonzero.
    halves = sign == "positive" and not odd and p.dtype.kind not in ("uint", "bool") and \
        all(u.offset == 0 for u in strong) and \
        any(u.op == "sum" and u.acc.is_float and
            counts.get(u.reducer, FALLBACK_COUNT) > _exact_cap(u.acc) for u in strong)
    if halves:
        sign = "both"
    if _exact_cap(p.dtype) < 2 * lanes:
        lane, lanes = 0, 1                                # no room to interleave
    # contribution = factor * value + offset must not be 0 (nor change sign): the
    # magnitudes start above the zero of every direct use
    base = 1
    if not odd and sign != "both":
        s = 1 if sign == "positive" else -1
        for u in strong:
            zero = -u.offset / (u.factor * s)
            if zero > 0:
                base = max(base, math.floor(zero) + 1)
    # the largest magnitude must be exact in the parameter and in every accumulator
    # after the update's factor and offset, and a float sum of `need` contributions
    # must stay exact in any order
    limit = _exact_cap(p.dtype)
    if sign != "positive" and p.dtype.is_int:
        limit = min(limit, -int(p.dtype.lowest) - 1)
    for u in strong:
        room = _exact_cap(u.acc)
        if u.op == "sum" and u.acc.is_float:
            count = counts.get(u.reducer, FALLBACK_COUNT)
            room //= max(1, -(-count // 2) if halves else count)
        limit = min(limit, int((room - abs(u.offset)) / max(1.0, abs(u.factor))))
    limit -= base - 1
    if limit < (2 * lane + 1 if odd else lane + 1):
        # interleaving would push this lane's values past what keeps its sums exact (a
        # bfloat16 sum of 192 terms holds only 1s): exactness first, distinctness from
        # the other parameters second
        lane, lanes = 0, 1
    peak_per_cycle = 2 * lanes if odd else lanes        # peak = cycle * this (about)
    cycle = _cycle(max(1, (limit + (1 if odd else 0)) // peak_per_cycle),
                   _need(strong, counts))
    shift = 0
    if any(u.kind == "opaque" for u in uses) and p.dtype.is_float:
        top = (2 * cycle * lanes - 1) if odd else base - 1 + cycle * lanes
        shift = max(0, math.ceil(math.log2(max(top, 1))))
    why = _why(strong)
    if shift:
        why += "; other expressions read it too: scaled into [-1, 1]"
    return Scheme("odd" if odd else "distinct", why, sign, cycle, lane, lanes, shift, base)


def _bits_scheme(p: ir.Buffer, uses: list[Use], counts) -> Scheme:
    bitwise = [u for u in uses if u.op in _BITWISE]
    ops = {u.op for u in bitwise}
    width = min([p.dtype.bits] + [u.acc.bits for u in bitwise if u.acc.is_int])
    if "bitand" in ops and ops & {"bitor", "bitxor"}:
        mode, positions = "split", width // 2
    elif "bitand" in ops:
        mode, positions = "cold", width
    else:
        mode, positions = "hot", width
    offsets = {u.offset for u in bitwise if u.factor == 1}
    offset = int(offsets.pop()) if len(offsets) == 1 and float(next(iter(
        {u.offset for u in bitwise}))).is_integer() else 0
    need = _need(bitwise, counts)
    cycle = positions
    if need > positions and (mode == "split" or "bitxor" not in ops):
        # more contributions than bits: one bit each for `positions` of every `cycle`
        # elements, none for the rest (they cannot be visible anyway), so the bits are
        # not all shared and every output keeps some private ones
        cycle = _prime_at_least(need)
    return Scheme("bits", _why(bitwise, kinds=False), cycle=cycle, mode=mode, width=width,
                  positions=positions, offset=offset)


def _product_scheme(p: ir.Buffer, uses: list[Use], counts) -> Scheme:
    products = [u for u in uses if u.op == "product"]
    need = _need(products, counts)
    acc = [u.acc for u in products]
    offsets = {u.offset for u in products}
    offset = offsets.pop() if len(offsets) == 1 else 0.0
    if not p.dtype.is_float and not float(offset).is_integer():
        offset = 0.0
    why = _why(products, kinds=False)
    values: tuple = ()
    if all(a.is_int for a in acc):
        top = min([_exact_cap(p.dtype) - int(abs(offset))] + [_exact_cap(a) for a in acc])
        values = tuple(range(3, max(4, min(top, 2 * max(need, 8) + 3)), 2))
    if not values:
        # every order of `need` terms stays within the range of the accumulator: with
        # 2 and 1/2 half of them can be 2, with ±2 all of them (integers have no 1/2)
        room = min(math.log2(float(a.finite_max)) for a in acc if a.is_float) \
            if any(a.is_float for a in acc) else 64
        if p.dtype.is_float and (need + 1) // 2 + 2 < room:
            values = (2.0, 0.5, -2.0, -0.5)
        elif p.dtype.kind == "int" and need + 2 < room:
            values = (2, -2)
        elif p.dtype.kind == "uint" and need + 2 < room:
            values = (2,)
        else:
            values = (-1,) if not p.dtype.kind == "uint" else (1,)
    if offset:
        values = tuple(v - (offset if p.dtype.is_float else int(offset)) for v in values)
        why += f" (the update adds {offset:g})"
    return Scheme("product", why, values=values, cycle=len(values))


def _powers_scheme(p: ir.Buffer, uses: list[Use], counts, schemes) -> Scheme:
    """The smaller factor of a product: 1, 2, 4, ... 2^(E-1) cycling, E <= 4, as large as
    the partner's peak and the accumulator's headroom allow."""
    scales = [u for u in uses if u.kind == "scale"]
    top = 4
    for u in scales:
        partner = schemes.get(u.partner)
        peak = partner.peak() if partner is not None and partner.kind in ("odd", "distinct") \
            else 1
        room = _exact_cap(u.acc)
        if u.op == "sum" and u.acc.is_float:
            room //= max(1, counts.get(u.reducer, FALLBACK_COUNT))
        while top > 1 and peak * 2 ** (top - 1) > room:
            top -= 1
    top = min(top, max(1, int(math.log2(max(2, _exact_cap(p.dtype))))))
    why = "scales " + ", ".join(sorted({f"{u.partner} in {u.op} {u.reducer}"
                                        for u in scales}))
    return Scheme("powers", why, values=tuple(2 ** e for e in range(top)), cycle=top)


# ----------------------------------------------------------------------------- values

def _permutation(seed: int, name: str, n: int) -> np.ndarray:
    rng = np.random.default_rng([seed & (2 ** 63 - 1), zlib.crc32(name.encode())])
    return rng.permutation(n)


_CHUNK = 1 << 22        # elements generated at once: bounds the int64 temporaries


def generate(p: ir.Buffer, scheme: Scheme, seed: int) -> np.ndarray:
    """The parameter's witness values in its shape (not for scheme kind default)."""
    perm = _permutation(seed, p.name, max(scheme.cycle, 1))
    flip = _permutation(seed + 1, p.name, 2)
    out = np.empty(p.size, dtype=p.dtype.np)
    for first in range(0, p.size, _CHUNK):
        f = np.arange(first, min(p.size, first + _CHUNK), dtype=np.int64)
        out[first:first + len(f)] = _chunk(p.dtype, scheme, perm, flip, f)
    return out.reshape(p.shape)


def _chunk(dtype: DType, scheme: Scheme, perm, flip, f: np.ndarray) -> np.ndarray:
    cycle = max(scheme.cycle, 1)
    k = perm[f % cycle]
    if scheme.kind in ("distinct", "odd"):
        c = k * scheme.lanes + scheme.lane
        mag = 2 * c + 1 if scheme.kind == "odd" else c + scheme.base
        if scheme.sign == "negative":
            vals = -mag
        elif scheme.sign == "both":
            # magnitudes stay distinct; the signs alternate with k, flipped per cycle
            vals = np.where((k + flip[(f // cycle) % 2]) % 2 == 0, mag, -mag)
        else:
            vals = mag
        if scheme.shift:
            return dtype.quantize(np.ldexp(vals.astype(np.float64), -scheme.shift))
        return dtype.quantize(vals.astype(np.float64) if dtype.is_float else vals)
    if scheme.kind == "bits":
        active = k < scheme.positions
        t = np.where(active, k, 0).astype(np.uint64)
        one = np.uint64(1)
        full = np.uint64((1 << scheme.width) - 1)
        bit = np.where(active, one << t, np.uint64(0))
        if scheme.mode == "hot":
            words = bit
        elif scheme.mode == "cold":
            words = full ^ bit
        else:
            half = np.uint64(scheme.width // 2)
            high = full ^ ((one << half) - one)
            words = bit | (high ^ (bit << half))
        words = (words - np.uint64(scheme.offset % (1 << 64))) & full
        return words.astype(np.dtype(f"uint{dtype.bits}")).view(dtype.np)
    values = np.array(scheme.values, dtype=np.float64 if dtype.is_float else np.int64)
    return dtype.quantize(values[k])


# ----------------------------------------------------------------------------- witness

@dataclass
class Witness:
    """Witness inputs of one program and what they guarantee (`verify.oracle.witness`)."""
    seed: int
    inputs: dict[str, np.ndarray]
    schemes: dict[str, Scheme]
    reducers: list[ReducerAudit] = field(default_factory=list)
    blocks: list[tuple[int, ...]] = field(default_factory=list)   # audited
    audited: bool = True               # False: the interpreter refused the program

    def to_json(self) -> dict:
        return {"seed": self.seed,
                "params": {n: {"kind": s.kind, "description": s.describe()}
                           for n, s in self.schemes.items()},
                "blocks": [list(b) for b in self.blocks], "audited": self.audited,
                "reducers": [r.to_json() for r in self.reducers]}

    def lines(self) -> list[str]:
        out = [f"{name}: {scheme.describe()}" for name, scheme in self.schemes.items()]
        if not self.audited:
            out.append("audit: the interpreter refused the program on these inputs")
            return out
        blocks = ", ".join(str(b) for b in self.blocks)
        out += [f"audit (blocks {blocks}): {r.describe()}" for r in self.reducers]
        return out


def witness(loaded, seed: int = 0, max_memory: int | None = None) -> Witness:
    """Witness inputs for a loaded program (verify.oracle.pipeline.Loaded) and their audit.
    Deterministic in (program, seed). The schemes are sized by the contributions per
    output that the audit observes (a first pass assumes FALLBACK_COUNT), so the sizing
    pass and the audit agree. Never raises for a program the interpreter refuses: the
    witness is then built from the static roles alone (audited False).

    The witness holds every parameter whole and its audit interprets them whole, so its
    memory is that of a whole-grid run (verify.oracle.cost.estimate), estimated before
    anything is built: over max_memory, pipeline.UsageError (exit 2), nothing built."""
    func = loaded.func
    if max_memory is not None:
        from verify_reducer.verify.oracle.pipeline import refuse_over   # pipeline loads no witness
        refuse_over(estimate(func), max_memory, "the witness inputs",
                    "give the inputs (--inputs IN.npz) or use `check` on seeded inputs, "
                    "which samples blocks")
    found = roles(func)
    blocks = audit_blocks(func)
    counts: dict[str, int] = {}
    for _ in range(3):
        schemes = choose_schemes(func, found, counts)
        values = _values(loaded, schemes, seed)
        try:
            audits, most = run_audit(func, values, blocks)
        except DiagnosticError:
            return Witness(seed, values, schemes, [], blocks, False)
        observed = {k: n + (1 if k in found.seeded else 0) for k, n in most.items()}
        if all(counts.get(k, FALLBACK_COUNT) >= n for k, n in observed.items()) \
                and (counts or not observed):
            break
        counts = {k: max(n, counts.get(k, 0)) for k, n in observed.items()}
    return Witness(seed, values, schemes, audits, blocks, True)


def _values(loaded, schemes: dict[str, Scheme], seed: int) -> dict[str, np.ndarray]:
    func = loaded.func
    defaults = [p.name for p in func.params if schemes[p.name].kind == "default"]
    given = loaded.given() if defaults else {}
    summed = {s.buffer for s in ir.walk(func.kernel.body)
              if isinstance(s, ir.AtomicUpdate) and s.op == "sum" and s.buffer.dtype.is_float}
    out = {}
    for p in func.params:
        scheme = schemes[p.name]
        if scheme.kind != "default":
            out[p.name] = generate(p, scheme, seed)
        elif p.name in given:
            out[p.name] = given[p.name]
        elif p in summed:
            out[p.name] = np.zeros(p.shape, dtype=p.dtype.np)
        else:
            out[p.name] = inputs_mod.generate(p, seed)
    return out


def witness_inputs(loaded, seed: int = 0) -> dict[str, np.ndarray]:
    """Every parameter's witness value (see the module's docstring)."""
    return witness(loaded, seed).inputs
