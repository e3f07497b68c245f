"""Differential fuzzing of lowerings: random TileLang reducer kernels, written as source
text (so the frontend is fuzzed too), each checked like `verify-reducer check` — the
logical interpreter against the simulated auto and canonical plans (and the CUDA backend
when asked) — and every program that is rejected, disagrees, violates exactly-once or
crashes us is saved with its finding.

The generator only writes programs that are valid by construction: a rejection is a
finding (a false positive of a checker) just as a mismatch is."""
from __future__ import annotations

import os
import traceback
from dataclasses import dataclass, field

import numpy as np

from . import pipeline

OPS_BY_DTYPE = {
    "float32": ("sum", "max", "min", "product"),
    "int32": ("sum", "max", "min", "bitand", "bitor", "bitxor"),
    "uint32": ("sum", "max", "bitand", "bitor", "bitxor"),
}
EXTENTS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
THREADS = (32, 64, 96, 128, 256)


@dataclass
class _Site:
    name: str                 # its input tensor
    extents: tuple[int, ...]
    index: str                # the reducer index expression over the loop variables
    value: str                # the contribution
    predicate: str | None


@dataclass
class _Kernel:
    threads: int
    grid: int
    warp_group: bool
    surface: str              # "v2" | "rfc" | "legacy"
    dtype: str
    op: str
    shape: tuple[int, ...]
    stages: int               # 0: no streaming loop around the updates
    seed: str | None
    sites: list[_Site] = field(default_factory=list)


def _pick(rng: np.random.Generator, options):
    return options[int(rng.integers(len(options)))]


def _site(rng, k: _Kernel, number: int) -> _Site:
    name = f"x{number}"
    if len(k.shape) == 2:
        rows, cols = k.shape
        extents = (rows, cols * _pick(rng, (1, 2)))
        index = "i, j" if extents[1] == cols else "i, j // 2"
    elif k.shape == (1,):
        extents = tuple(_pick(rng, EXTENTS) for _ in range(int(rng.integers(1, 3))))
        index = "0"
    else:
        (m,) = k.shape
        if rng.random() < 0.5:
            extents, index = (m, _pick(rng, EXTENTS)), "i"
        else:
            extents, index = (_pick(rng, EXTENTS),), f"j % {m}"
    loop_vars = "i, j" if len(extents) == 2 else "j"
    read = f"{name}[bx, {'s, ' if k.stages else ''}{loop_vars}]"
    value = _pick(rng, (read, read, f"{read} * 2", f"T.abs({read})")
                  if k.dtype == "float32" else (read, read, f"{read} + 1"))
    if k.op == "product" and k.dtype == "float32":
        value = f"T.abs({read}) + 0.5"         # keep products away from underflow
    predicate = None
    roll = rng.random()
    last = loop_vars.split(", ")[-1]
    if roll < 0.2:
        predicate = f"{last} < {max(1, extents[-1] // 2)}"
    elif roll < 0.3 and k.dtype == "float32":
        predicate = f"{read} > 0"
    return _Site(name, extents, index, value, predicate)


def _kernel(rng: np.random.Generator) -> _Kernel:
    dtype = _pick(rng, tuple(OPS_BY_DTYPE))
    op = _pick(rng, OPS_BY_DTYPE[dtype])
    warp_group = rng.random() < 0.15
    threads = 256 if warp_group else _pick(rng, THREADS)
    shape = _pick(rng, ((1,), (1,), (4,), (8,), (16,), (2, 4), (4, 8)))
    surface = _pick(rng, ("v2", "v2", "rfc", "legacy"))
    seed = None
    if surface == "v2" and rng.random() < 0.3:
        seed = "3" if dtype != "float32" else "1.5"
        if op in ("bitand", "bitor", "bitxor", "max", "min"):
            seed = "5"
    k = _Kernel(threads, _pick(rng, (1, 2)), warp_group, surface, dtype, op, shape,
                _pick(rng, (0, 0, 2, 3)), seed)
    k.sites = [_site(rng, k, n) for n in range(int(rng.integers(1, 4)))]
    return k


def _tensor_shape(k: _Kernel, site: _Site) -> str:
    dims = (k.grid, *((k.stages,) if k.stages else ()), *site.extents)
    return "(" + ", ".join(map(str, dims)) + ")"


def render(k: _Kernel) -> str:
    """The kernel as TileLang source."""
    params = [f"    {s.name}: T.Tensor({_tensor_shape(k, s)}, T.{k.dtype})," for s in k.sites]
    out_shape = "(" + ", ".join(map(str, (k.grid, *k.shape))) + ")"
    params.append(f"    out: T.Tensor({out_shape}, T.{k.dtype}),")
    body: list[str] = []
    shape = "(" + ", ".join(map(str, k.shape)) + ("," if len(k.shape) == 1 else "") + ")"
    if k.surface == "legacy":
        body.append(f'acc = T.alloc_reducer({shape}, T.{k.dtype}, op="{k.op}", '
                    f'replication="all")')
        body.append("T.clear(acc)" if k.op == "sum" else _legacy_fill(k))
    else:
        body.append(f'acc = T.alloc_reducer({shape}, T.{k.dtype}, op="{k.op}")')
        if k.surface == "v2":
            body.append(f"T.reducer_init(acc{', ' + k.seed if k.seed else ''})")
    indent = ""
    if k.stages:
        body.append(f"for s in T.Pipelined({k.stages}, num_stages=2):")
        indent = "    "
    for site in k.sites:
        loop_vars = "i, j" if len(site.extents) == 2 else "j"
        extents = ", ".join(map(str, site.extents))
        body.append(f"{indent}for {loop_vars} in T.Parallel({extents}):")
        inner = indent + "    "
        if site.predicate:
            body.append(f"{inner}if {site.predicate}:")
            inner += "    "
        body.append(inner + _update(k, site))
    out_vars = "i, j" if len(k.shape) == 2 else "i"
    out_extents = ", ".join(map(str, k.shape))
    if k.surface == "legacy":
        body.append("T.finalize_reducer(acc)")
        source = "acc"
    else:
        body.append(f"result = T.alloc_fragment({shape}, T.{k.dtype})")
        body.append("T.finalize_reducer(acc, result)")
        source = "result"
    body.append(f"for {out_vars} in T.Parallel({out_extents}):")
    body.append(f"    out[bx, {out_vars}] = {source}[{out_vars}]")
    pad = " " * (12 if k.warp_group else 8)
    lines = ["# expect: ok", "import tilelang.language as T", "", "", "@T.prim_func",
             "def main(", *params, "):",
             f"    with T.Kernel({k.grid}, threads={k.threads}) as bx:"]
    if k.warp_group:
        lines.append("        with T.ws(1):")
    lines += [pad + line for line in body]
    return "\n".join(lines) + "\n"


def _legacy_fill(k: _Kernel) -> str:
    identity = {"max": "T.min_value", "min": "T.max_value"}.get(k.op)
    if identity:
        return f"T.fill(acc, {identity}(T.{k.dtype}))"
    if k.op in ("bitand",):
        return "T.fill(acc, -1)" if k.dtype == "int32" else "T.fill(acc, 4294967295)"
    if k.op == "product":
        return "T.fill(acc, 1)"
    return "T.clear(acc)"


def _update(k: _Kernel, site: _Site) -> str:
    if k.surface == "rfc":
        return f"T.reducer_update(acc, ({site.index},), {site.value})"
    if k.surface == "v2":
        return f"T.reducer_update(acc[{site.index}], {site.value})"
    form = {"sum": "+=", "product": "*=", "bitand": "&=", "bitor": "|=", "bitxor": "^="}
    if k.op in form:
        return f"acc[{site.index}] {form[k.op]} {site.value}"
    return f"acc[{site.index}] = T.{k.op}(acc[{site.index}], {site.value})"


# ----------------------------------------------------------------------------- running

@dataclass
class Finding:
    case: int
    path: str
    kind: str                 # "rejected" | "mismatch" | "violation" | "crash"
    summary: str


def _judge(report: pipeline.CheckReport) -> tuple[str, str] | None:
    errors = [d for d in report.diagnostics if d.is_error]
    if errors:
        return "rejected", "; ".join(f"{d.code}: {d.message}" for d in errors[:3])
    if report.violations:
        return "violation", "; ".join(f"{d.code}: {d.message}" for d in report.violations[:3])
    for label, comps in report.comparisons.items():
        bad = [c for c in comps if not c.ok]
        if bad:
            c = bad[0]
            return "mismatch", (f"{label}: {c.name}{list(c.first_index)} = {c.got}, "
                                f"expected {c.expected} (bound {c.bound:g})")
    return None


def fuzz(count: int, seed: int, out_dir: str, backends: tuple[str, ...] = ("sim",),
         progress=None) -> list[Finding]:
    """Generate and check count programs; write each to out_dir (findings are named
    `finding-*.py`, the rest `case-*.py` are removed again) and return the findings."""
    os.makedirs(out_dir, exist_ok=True)
    findings = []
    for case in range(count):
        rng = np.random.default_rng([seed, case])
        source = render(_kernel(rng))
        path = os.path.join(out_dir, f"case-{seed}-{case}.py")
        with open(path, "w") as f:
            f.write(source)
        verdict = _check_case(path, backends)
        if verdict is None:
            os.remove(path)
        else:
            kind, summary = verdict
            final = os.path.join(out_dir, f"finding-{seed}-{case}-{kind}.py")
            with open(final, "w") as f:
                f.write(f"# fuzz finding ({kind}): {summary}\n".replace("\n#", " ") + source)
            os.remove(path)
            findings.append(Finding(case, final, kind, summary))
        if progress:
            progress(case, verdict)
    return findings


def _check_case(path: str, backends: tuple[str, ...]) -> tuple[str, str] | None:
    try:
        report = pipeline.check(path, blocks="all")
        verdict = _judge(report)
        if verdict is None and "cuda" in backends:
            verdict = _judge_cuda(report)
        return verdict
    except Exception as exc:  # a crash of ours is exactly what fuzzing is for
        return "crash", f"{type(exc).__name__}: {exc} | " + \
            traceback.format_exc(limit=-3).replace("\n", " | ")


def _judge_cuda(report: pipeline.CheckReport) -> tuple[str, str] | None:
    values = report.loaded.inputs(report.seed)
    for planner in ("auto", "canonical"):
        run = pipeline.run_backend(report.loaded, "cuda", values, planner)
        for c in pipeline.compare_outputs(run.outputs, report.reference):
            if not c.ok:
                return "mismatch", (f"cuda/{planner}: {c.name}{list(c.first_index)} = "
                                    f"{c.got}, expected {c.expected} (bound {c.bound:g})")
    return None
