"""Fuzzing campaigns: program n of seed s is drawn, judged and (when it is a finding)
minimized by one task, `run_case(s, n)`, a pure function of (s, n). Tasks run inline, in a
local process pool (`jobs`) or on a Dask distributed cluster (`scheduler`); the parent
alone writes files: each finding's minimized program (and the original) in `out_dir`,
a TileLang finding's bug report folder beside it, a `findings.json` that groups findings
by signature, and, with `corpus`, one JSON line per finished case, so a campaign that is
stopped resumes where it stopped. A TileLang campaign's setup (version and pass configs,
plain data) is an argument of every task, so it reaches every worker."""
from __future__ import annotations

import concurrent.futures as cf
import itertools
import json
import multiprocessing
import os
import sys
from dataclasses import asdict, dataclass, replace
from typing import Iterator

import numpy as np

from verify_reducer.codegen.tilelang_backend import TileLangSetup

from verify_reducer.verify.cli import outputs
from verify_reducer.verify.fuzzing import FAMILIES, MINIMIZE_BUDGET
from verify_reducer.verify.fuzzing.bugreport import BugReport, save_report
from verify_reducer.verify.oracle.pipeline import UsageError
from verify_reducer.verify.fuzzing import model, splitk
from verify_reducer.verify.fuzzing.grammar import Kernel, draw
from verify_reducer.verify.fuzzing.user_ops import swap
from verify_reducer.verify.fuzzing.judge import INLINE_ELEMENTS, judge, program_text
from verify_reducer.verify.fuzzing.minimize import minimize
from verify_reducer.verify.fuzzing.outcome import Outcome
from verify_reducer.verify.fuzzing.tilelang_target import bug_report, prepare_setup

IN_FLIGHT_PER_JOB = 2         # cases submitted ahead per worker (the rest are drawn later)


@dataclass
class Finding:
    case: int
    path: str                 # the minimized program
    kind: str                 # rejected | violation | mismatch | oracle | crash | ...
    summary: str
    signature: tuple[str, str, str, str] = ("", "", "", "")
    seed: int = 0
    original: str = ""        # the program as generated
    report: str = ""          # a TileLang finding's bug report folder


@dataclass
class CaseResult:
    seed: int
    case: int
    outcome: Outcome | None
    minimized: str = ""       # program text of the minimized kernel
    original: str = ""
    sidecar: dict | None = None   # inputs and expected results too large for the header
    report: BugReport | None = None   # a TileLang finding's bug report, to be saved



def kernel_of(seed: int, case: int, user_ops: float = 0.0,
              family: str = "reducers") -> Kernel | splitk.SplitK:
    """Program case of seed in family; user_ops: the chance each eligible integer reducer
    declares its op (verify.fuzzing.user_ops, drawn from a stream of its own: 0 changes
    nothing; split-K kernels declare none)."""
    rng = np.random.default_rng([seed, case])
    if family == "splitk":
        return splitk.draw(rng)
    if family != "reducers":
        raise ValueError(f"no program family {family!r} (one of {', '.join(FAMILIES)})")
    return swap(draw(rng), user_ops, [seed, case])


def run_case(seed: int, case: int, backends: tuple[str, ...] = ("sim",),
             budget: int = MINIMIZE_BUDGET,
             tilelang: TileLangSetup | None = None, user_ops: float = 0.0,
             family: str = "reducers") -> CaseResult:
    k = kernel_of(seed, case, user_ops, family)
    outcome = judge(k, backends, tilelang)
    if outcome is None:
        return CaseResult(seed, case, None)

    # the verdict on the last candidate the minimizer kept: the final program's (judged
    # once: a TileLang run is slow)
    accepted: dict[Kernel | splitk.SplitK, Outcome] = {}

    def signature_of(candidate: Kernel | splitk.SplitK):
        found = judge(candidate, backends, tilelang)
        if found is not None and found.signature == outcome.signature:
            accepted.clear()
            accepted[candidate] = found
        return found.signature if found else None
    small = minimize(k, outcome.signature, signature_of, budget)
    final = accepted.get(small, outcome)
    origin = f"case {case} of `verify-reducer fuzz --seed {seed}" \
        f"{f' --user-ops {user_ops:g}' if user_ops else ''}`" if family == "reducers" else \
        f"case {case} of seed {seed} of the {family} family " \
        f"(`verify.fuzzing.campaign.fuzz(..., family={family!r})`)"
    report = bug_report(final, outcome, origin)
    # TileLang's run stays here: only plain data goes back to the campaign
    final, outcome = replace(final, evidence=None), replace(outcome, evidence=None)
    return CaseResult(seed, case, final, _text(small, final), _text(k, outcome),
                      _sidecar(small), report)


def _text(k: Kernel | splitk.SplitK, outcome: Outcome) -> str:
    given = model.inputs(k)
    summary = f"# fuzz finding ({outcome.kind} {outcome.code}, {outcome.stage}, " \
              f"{outcome.backend}): {outcome.summary}".replace("\n", " ")
    return summary + "\n" + program_text(k, given, model.expected(k, given))


def _sidecar(k: Kernel | splitk.SplitK) -> dict | None:
    given = model.inputs(k)
    want = model.expected(k, given)
    if sum(v.size for v in (*given.values(), *want.values())) <= INLINE_ELEMENTS:
        return None
    return {"inputs": given, "expected": want}


# ----------------------------------------------------------------------------- running

def fuzz(count: int, seed: int, out_dir: str, backends: tuple[str, ...] = ("sim",),
         progress=None, jobs: int = 1, scheduler: str | None = None,
         corpus: str | None = None, budget: int = MINIMIZE_BUDGET,
         meter=None, tilelang: TileLangSetup | None = None,
         user_ops: float = 0.0, family: str = "reducers") -> list[Finding]:
    """Run cases 0..count-1 of seed in jobs processes (0: one per CPU) or on the Dask
    scheduler at that address; return every finding (the corpus's earlier ones
    included). progress(case, (kind, summary) | None) is called as each case finishes;
    meter (verify.cli.output's BarMeter or LineMeter) shows the campaign's progress:
    start(total, done, findings), step(findings) as each case finishes, close() at
    the end. tilelang: the setup of a
    campaign whose backends have "tilelang" (default: no pass configs); UsageError
    before any program is drawn when TileLang cannot run here. family: the programs
    drawn (FAMILIES); a corpus records one campaign, so resume it with the same family."""
    if family not in FAMILIES:
        raise UsageError(f"no program family {family!r} (one of {', '.join(FAMILIES)})")
    if "tilelang" in backends and tilelang is None:
        tilelang = prepare_setup()
    os.makedirs(out_dir, exist_ok=True)
    jobs = jobs or default_jobs()
    done, findings = _resume(corpus, seed)
    # the cases left, drawn as they are run: `--count 10**12` is a campaign that runs
    # until stopped, not a list of 10**12 numbers built before the first case
    todo = (n for n in range(count) if n not in done)
    left = count - sum(1 for n in done if n < count)
    if meter:
        meter.start(count, len(done), len(findings))
    try:
        for result in _results(todo, left, seed, (backends, budget, tilelang, user_ops,
                                                     family),
                               jobs, scheduler):
            finding = _save(result, out_dir) if result.outcome else None
            if finding:
                findings.append(finding)
            if corpus:
                _record(corpus, result, finding)
            if progress:
                o = result.outcome
                progress(result.case, None if o is None else (o.kind, o.summary))
            if meter:
                meter.step(len(findings))
    finally:            # a bar is stopped (its drawing thread too) whatever happens
        if meter:
            meter.close()
    findings.sort(key=lambda f: f.case)
    _write_groups(out_dir, findings)
    return findings


def default_jobs() -> int:
    """`--jobs 0` and the CLI's default: one worker per CPU this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:          # not on Linux
        return os.cpu_count() or 1


def _results(todo: Iterator[int], left: int, seed, task, jobs, scheduler):
    """CaseResults as they finish (in any order) for the `left` cases todo draws;
    task: run_case's arguments after (seed, case), plain data that travels with every
    task. At most IN_FLIGHT_PER_JOB cases per worker are submitted ahead, so memory
    follows the workers, never the count."""
    if scheduler:
        yield from _on_dask(todo, seed, task, scheduler)
    elif jobs <= 1 or left <= 1:
        for n in todo:
            yield run_case(seed, n, *task)
    else:
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
        with cf.ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
            pending: set[cf.Future] = set()
            try:
                for n in itertools.islice(todo, jobs * IN_FLIGHT_PER_JOB):
                    pending.add(pool.submit(run_case, seed, n, *task))
                while pending:
                    finished, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                    for n in itertools.islice(todo, len(finished)):
                        pending.add(pool.submit(run_case, seed, n, *task))
                    for fut in finished:
                        yield fut.result()
            finally:        # a UsageError (a backend cannot run here) stops them all
                for fut in pending:
                    fut.cancel()


def _on_dask(todo: Iterator[int], seed, task, address):
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise UsageError("--scheduler needs dask's distributed scheduler: "
                         "pip install 'verify-reducer[campaign]'") from None
    with Client(address) as client:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        ahead = [client.submit(run_case, seed, n, *task, pure=False)
                 for n in itertools.islice(todo, workers * IN_FLIGHT_PER_JOB)]
        running = as_completed(ahead)
        for fut in running:
            for n in itertools.islice(todo, 1):
                running.add(client.submit(run_case, seed, n, *task, pure=False))
            yield fut.result()


def _save(result: CaseResult, out_dir: str) -> Finding:
    o = result.outcome
    stem = os.path.join(out_dir, f"finding-{result.seed}-{result.case}-{o.kind}")
    # written as every CLI output is (verify.cli.outputs: atomic, never through a link)
    outputs.write_text("--out", stem + ".py", result.minimized)
    outputs.write_text("--out", stem + ".original.py", result.original)
    if result.sidecar:
        outputs.write_npz("--out", stem + ".inputs.npz", result.sidecar["inputs"])
        outputs.write_npz("--out", stem + ".expected.npz", result.sidecar["expected"])
    report = save_report(result.report, out_dir, "--out") if result.report else ""
    return Finding(result.case, stem + ".py", o.kind, o.summary, o.signature, result.seed,
                   stem + ".original.py", report)


def groups(findings: list[Finding]) -> list[dict]:
    """Findings grouped by signature, the group with most findings first; each group
    names its smallest program as the representative."""
    by: dict[tuple, list[Finding]] = {}
    for f in findings:
        by.setdefault(tuple(f.signature), []).append(f)
    out = []
    for sig, members in sorted(by.items(), key=lambda kv: -len(kv[1])):
        smallest = min(members, key=lambda f: _size(f.path))
        group = {"signature": dict(zip(("kind", "code", "stage", "backend"), sig)),
                 "count": len(members), "cases": [f.case for f in members],
                 "representative": smallest.path, "summary": smallest.summary}
        if smallest.report:
            group["report"] = smallest.report
        out.append(group)
    return out


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return sys.maxsize


def _write_groups(out_dir: str, findings: list[Finding]) -> None:
    path = os.path.join(out_dir, "findings.json")
    if not findings:
        if os.path.exists(path):
            os.remove(path)
        return
    outputs.write_text("--out", path, json.dumps({"groups": groups(findings)}, indent=1))


# ----------------------------------------------------------------------------- corpus

def _corpus_file(corpus: str) -> str:
    os.makedirs(corpus, exist_ok=True)
    return os.path.join(corpus, "results.jsonl")


def _resume(corpus: str | None, seed: int) -> tuple[set[int], list[Finding]]:
    """The cases of seed the corpus has finished, and their findings."""
    done: set[int] = set()
    findings: list[Finding] = []
    if not corpus or not os.path.exists(_corpus_file(corpus)):
        return done, findings
    with open(_corpus_file(corpus), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue          # a line cut short when the campaign was stopped
            try:
                if entry.get("seed") != seed:
                    continue
                if not isinstance(entry["case"], int):
                    raise TypeError(f"case {entry['case']!r} is not a number")
                d = entry.get("finding")
                finding = Finding(**{**d, "signature": tuple(d["signature"])}) if d \
                    else None
            except (AttributeError, KeyError, TypeError, ValueError) as exc:
                # a record of another version or an edited file: resuming from it
                # would skip or misreport cases, so say which line and stop
                raise UsageError(f"--corpus {corpus}: line {number} of "
                                 f"{_corpus_file(corpus)} is not a case record "
                                 f"({type(exc).__name__}: {exc}); move the file away to "
                                 f"start the corpus afresh") from None
            done.add(entry["case"])
            if finding is not None:
                findings.append(finding)
    return done, findings


def _record(corpus: str, result: CaseResult, finding: Finding | None) -> None:
    entry = {"seed": result.seed, "case": result.case,
             "finding": asdict(finding) if finding else None}
    with open(_corpus_file(corpus), "a") as f:
        f.write(json.dumps(entry) + "\n")
