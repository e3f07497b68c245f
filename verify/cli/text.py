"""The human report of `check` (and the value and comparison lines `run` shares):
plain text, which verify.cli.output colours on a terminal. verbose adds every proof
and more of each output's values."""
from __future__ import annotations

from collections import Counter

import numpy as np

from verify_reducer.spec.ir import Alloc, ReducerFinalize, walk
from verify_reducer.interp.accept import unjudged_reason

from verify_reducer.verify.oracle import pipeline
VERBOSE_VALUES = 64      # values of an output that -v shows (8 without it)


def values_text(array: np.ndarray, limit: int = 8) -> str:
    flat = array.reshape(-1)
    shown = ", ".join(str(v) for v in flat[:limit].tolist())
    more = f", ... ({flat.size} values)" if flat.size > limit else ""
    return f"[{shown}{more}]"


def check_text(report: pipeline.CheckReport, verbose: bool = False) -> str:
    func = report.loaded.func
    k = func.kernel
    grid = "×".join(str(g) for g in k.grid)
    finalizes = sum(isinstance(s, ReducerFinalize) for s in walk(k.body))
    errors = sum(d.is_error for d in report.diagnostics)
    lines = [f"{report.loaded.path}: {func.name} (grid {grid}, {k.threads} threads, "
             f"{finalizes} finalize site{'s' * (finalizes != 1)})"]
    lines.append(f"  verify         {'ok' if not errors else f'{errors} error(s)'}")
    if not any(isinstance(s, Alloc) and s.buffer.is_reducer for s in walk(k.body)):
        # "verified" must not read as an exactly-once proof that had nothing to prove
        lines.append("  reducers       none: no deferred reduction, so no exactly-once claim; "
                     "verified says the lowerings agree with the interpreter")
    for op in report.reducer_ops:
        lines.append(f"  reducer op     {op.name} ({op.dtype}, line {op.line}): laws "
                     f"{tally_text(op.laws)}")
        if verbose:
            lines += proof_lines(op.laws)
    if report.selection is not None:
        lines += blocks_text(report)
    if report.reference is not None:
        per_epoch = report.reference.epochs
        lines.append(f"  interpret      ok: seed {report.seed}, {len(per_epoch)} epoch(s) "
                     f"finalized, {sum(int(e.counts.sum()) for e in per_epoch)} contributions")
        limit = VERBOSE_VALUES if verbose else 8
        for name, value in report.reference.outputs.items():
            lines.append(f"                 {name} = {values_text(value, limit)}")
    for epoch in report.epochs:
        width = f", all-reduce width {epoch.width}" if epoch.width else ""
        lines.append(f"  plan           {epoch.reducer} (line {epoch.line}): {epoch.plan}"
                     f"{width}; proofs: {tally_text(epoch.proofs)}")
        for note in epoch.notes:
            lines.append(f"                 {note.code}: {note.message}")
        if verbose:
            lines += proof_lines(epoch.proofs)
    for label, comps in report.comparisons.items():
        lines.append(f"  {label:<14} {comparison_status(comps)}")
    if report.family is not None:
        lines += family_text(report.family, verbose)
    for s in report.suppressed:
        at = f"{s.diagnostic.span.line}:{s.diagnostic.span.col}" if s.diagnostic.span else "-"
        lines.append(f"  suppressed     {s.diagnostic.code} at {at} ({s.diagnostic.severity}): "
                     f"{s.reason}")
    if report.exit_code == pipeline.EXIT_INCONCLUSIVE:
        lines.append("  not judged     on these inputs no bound can tell a right answer "
                     "from a wrong one there (docs/semantics.md §9); `--inputs witness` "
                     "chooses inputs whose sums are exact where the dtype allows")
    lines.append(f"verdict: {report.verdict}")
    return "\n".join(lines)


def tally_text(proofs) -> str:
    """`3 proved, 1 refuted in 12 ms`: the results of some proofs and their time."""
    results = Counter(p.result for p in proofs)
    tally = ", ".join(f"{results[r]} {r}" for r in ("proved", "refuted", "unknown")
                      if results[r])
    return f"{tally or 'none'} in {sum(p.ms for p in proofs):.0f} ms"


def proof_lines(proofs) -> list[str]:
    return [f"                 proof {p.name}: {p.result} ({p.ms:.0f} ms)"
            + (f": {p.counterexample}" if p.counterexample else "") for p in proofs]


def blocks_text(report: pipeline.CheckReport) -> list[str]:
    """Which blocks ran and why: the independence proof, the classes, the sample, the
    memory estimate, and how much of each output the comparisons covered."""
    sel = report.selection
    ind = sel.independence
    queries = f"{ind.queries} quer{'y' if ind.queries == 1 else 'ies'}, {ind.ms:.0f} ms"
    commuting = "" if not ind.commuting else \
        f" up to the order of atomic updates of {', '.join(ind.commuting)}" + \
        " (each block's contributions compared)"
    proof = (f"independence proved{commuting} ({queries})" if ind.proved
             else f"independence NOT proved: {ind.reason}; every block runs")
    memory = f"memory estimate {report.estimate.describe()}" if report.estimate else ""
    if sel.total == 1:
        return [f"  blocks         1 of 1; {memory}"]
    if sel.blocks is None:
        why = "" if not ind.proved else f" ({sel.why_all})"
        return [f"  blocks         all {sel.total}{why}; {proof}",
                f"                 {memory}"]
    lines = [f"  blocks         {len(sel.blocks)} of {sel.total}: {block_list(sel.blocks)}; "
             f"{proof}"]
    lines.append("                 classes: " + "; ".join(
        f"{c.first}" + (f" x{c.size}" if c.size else "") + f" {', '.join(c.traits)}"
        for c in sel.classes))
    notes = list(dict.fromkeys(c.note for c in sel.classes if c.note))
    lines += [f"                 classes approximate: {n}" for n in notes]
    if sel.sampled:
        lines.append(f"                 random sample (seed {report.seed}): "
                     f"{block_list(sel.sampled)}")
    compared = [c for c in next(iter(report.comparisons.values()), []) if c.compared]
    if compared:
        sizes = {p.name: p.size for p in report.loaded.func.params}
        # a tensor blocks meet in through atomics is compared once per sampled block that
        # contributes to an element: a count of (block, element) results, not elements
        lines.append("                 compared " + ", ".join(
            f"{c.name}: {c.compared} (block, element) results of the sampled blocks' "
            f"contributions, {sizes[c.name]} elements" if c.name in ind.commuting else
            f"{c.name}: {c.compared} of {sizes[c.name]} elements" for c in compared))
    lines.append(f"                 {memory}")
    return lines


def block_list(blocks, limit: int = 8) -> str:
    shown = ", ".join(str(b) for b in blocks[:limit])
    return shown + (f", ... ({len(blocks)} blocks)" if len(blocks) > limit else "")


def comparison_status(comps: list[pipeline.Comparison]) -> str:
    """`== interpreter`, `MISMATCH ...` or `INCONCLUSIVE ...` (elements nobody could
    judge, named with their bound: never a pass), with what else the reader must know."""
    bad = [c for c in comps if not c.ok]
    unjudged = [c for c in comps if c.unchecked]
    overflow = sum(c.overflow for c in comps)
    notes = [unchecked_text(c) for c in unjudged] if bad else []
    if overflow:
        notes.append(f"{overflow} element(s) where some order overflows: ±inf legal there")
    caveat = f" ({'; '.join(notes)})" if notes else ""
    if bad:
        return "MISMATCH " + "; ".join(
            f"{c.name}{list(c.first_index)}: got {c.got}, expected {c.expected} "
            f"(bound {c.bound:g}), {c.mismatches} element(s)" for c in bad) + caveat
    if unjudged:
        return "INCONCLUSIVE " + "; ".join(unchecked_text(c) for c in unjudged) + caveat
    return "== interpreter" + caveat


def unchecked_text(c: pipeline.Comparison) -> str:
    """`y: 3 of 8 element(s) not judged, first y[2] (expected -0.318): its bound is
    infinite`."""
    return (f"{c.name}: {c.unchecked} of {c.compared} element(s) not judged, first "
            f"{c.name}{list(c.unchecked_index)} (expected {c.unchecked_expected}): "
            f"{unjudged_reason(c.unchecked_expected, c.unchecked_bound)}")




def family_text(family, verbose: bool = False) -> list[str]:
    """The for-all lines: the family's verdict, its obligations, and the instance at the
    smallest counterexample (verify.family.checker)."""
    results = Counter(p.result for p in family.proofs)
    tally = ", ".join(f"{results[r]} {r}" for r in ("proved", "refuted", "unknown")
                      if results[r])
    what = family.decl.describe()
    if family.verified:
        lines = [f"  for-all        verified for all {what}: {tally} in {family.ms:.0f} ms"]
    else:
        lines = [f"  for-all        not verified for all {what}"
                 f" ({tally or 'no proof'}, {family.ms:.0f} ms)"]
        lines += [f"                 {d.code}: {d.message}" for d in family.diagnostics]
    if verbose:
        lines += [f"                 proof {p.name}: {p.result} ({p.ms:.0f} ms)"
                  + (f": {p.counterexample}" if p.counterexample else "")
                  for p in family.proofs]
    inst = family.instance
    if inst is not None:
        lines += instance_text(inst)
    return lines


def instance_text(inst) -> list[str]:
    """The program at the smallest counterexample sizes (verify.family.instance): the
    verdict there, the blocks that ran, and each executor's own finding."""
    at = ", ".join(f"{n}={v}" for n, v in inst.sizes.items())
    found = inst.errors + inst.report.violations
    lines = [f"  instance       {at}: {inst.verdict}"
             + (f" ({diagnostic_text(found[0])})" if found else "")]
    sel, est = inst.report.selection, inst.report.estimate
    if sel is not None:
        ran = f"sampled {len(sel.blocks)} of {sel.total} blocks (seed {inst.report.seed})" \
            if sel.blocks is not None else f"the whole grid ({sel.total} block{'s' * (sel.total != 1)})"
        memory = f", memory estimate {est.describe()}" if est is not None else ""
        lines.append(f"                 {ran}{memory}")
    if inst.not_run:
        lines.append(f"                 not run: {inst.not_run}")
    for e in inst.executions:
        if e.status in ("stopped", "violations", "not run") and e.diagnostics:
            more = f" (+{len(e.diagnostics) - 1} more)" if len(e.diagnostics) > 1 else ""
            what = f"{e.status}: {diagnostic_text(e.diagnostics[0])}{more}"
        elif e.status == "mismatch":
            what = f"mismatch: {comparison_status(e.comparisons)}"
        elif e.status == "not run":
            what = f"not run: {e.why}"
        elif e.label == "interp":
            what = f"ok: {e.why}"
        else:
            what = e.why or (comparison_status(e.comparisons) if e.comparisons else "ok")
        lines.append(f"                 {e.label}: {what}")
    return lines


def diagnostic_text(d) -> str:
    """`R102 at 34:36: index ... out of bounds`: one diagnostic on one line."""
    where = f" at {d.span.line}:{d.span.col}" if d.span else ""
    return f"{d.code}{where}: {d.message}"
