"""Verified for every size of a family (docs/design.md §21).

`check_family(report, cli)` runs after the file's own instance was checked. With
`# for-all:` lines (or `--for-all`) it

1. validates the directives (R110: unknown names, names that are not integer module
   constants, the file's values outside their ranges or against an assumption);
2. lowers the program again with the sizes symbolic (spec.symbolic), requires that no
   size ended up where TileLang needs a compile-time constant of the kernel's shape
   (a fragment's shape, a `T.Parallel` extent, the thread count: R110), and lowers it a
   third time at a second member of the family: every integer that is not symbolic
   must be the same there (else a size steered the lowering where the proofs cannot
   follow: R220);
3. proves the obligations of verify.family.proofs and verify.family.sources, and runs
   the epoch verifier once per trip-count case of the serial loops whose bounds are
   sizes (a loop that may run zero times is a real R202 case);
4. on a refutation, takes the smallest counterexample (sizes lexicographically, in
   declaration order), reports R220 with it, and runs the program instantiated at
   those sizes (verify.family.instance: the interpreter and the simulator, each to its
   own first error, blocks sampled and memory limited as usual), so the failure is
   shown concretely.

A Z3 `unknown` is never a pass: it is R220 too ("not proved")."""
from __future__ import annotations

import dataclasses
import itertools
import time
from dataclasses import dataclass, field, fields, is_dataclass

import z3

from verify_reducer.spec import ir
from verify_reducer.spec.diagnostics import Diagnostic, DiagnosticError, Note, error
from verify_reducer.spec.frontend import parse_source
from verify_reducer.spec.frontend.family import (DirectiveError, FamilyDecl, check_names,
                                                  read_family)
from verify_reducer.spec.source import Span
from verify_reducer.spec.symbolic import SizeInt, is_symbolic, recording, size

from verify_reducer.codegen.layout import infer_layouts
from verify_reducer.verify.epochs.checker import check_func
from verify_reducer.verify.family.proofs import (CASES, OPS, AssumptionError, FamilyEncoder, FamilySpace,
                            bounds_query, decision_query, global_accesses, size_loops,
                            size_text, trip_case_term)
from verify_reducer.verify.family.instance import Instance, check_instance
from verify_reducer.verify.family.sources import covered_query, sources, unique_query
from verify_reducer.verify.oracle.pipeline import loaded_layouts
from verify_reducer.codegen.proofs.fast import (distinct_sites, finalize_destinations,
                                               legality_queries, reducer_sites, search_fast)
from verify_reducer.codegen.proofs.layout import guard_query, injective_query
from verify_reducer.codegen.proofs.obligation import PROVED, REFUTED, UNKNOWN, ProofResult, Query, solve
from verify_reducer.codegen.proofs.signature import update_sites

TIMEOUT_MS = 2000


@dataclass
class FamilyResult:
    decl: FamilyDecl
    proofs: list[ProofResult] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    counterexample: dict[str, int] | None = None   # the smallest failing sizes
    instance: Instance | None = None               # the program run at those sizes
    ms: float = 0.0

    @property
    def verified(self) -> bool:
        return not self.diagnostics and all(p.proved for p in self.proofs)

    def to_json(self) -> dict:
        return {
            "sizes": [{"name": s.name, "lo": s.lo, "hi": s.hi} for s in self.decl.sizes],
            "assumptions": [a.text for a in self.decl.assumptions],
            "verified": self.verified,
            "ms": round(self.ms, 3),
            "proofs": [p.to_json() for p in self.proofs],
            "counterexample": self.counterexample,
            "instance": None if self.instance is None else self.instance.to_json(),
        }


def check_family(report, cli: FamilyDecl | None, seed: int = 0,
                 max_memory: int | None = None) -> None:
    """Prove report's program for every size of its family (nothing without one).
    Adds the family's diagnostics (R110, R220) to report; DirectiveError for a bad
    --for-all/--assume flag."""
    loaded = report.loaded
    if loaded is None:
        return
    decl, problems = read_family(loaded.source, loaded.path)
    if cli is not None:
        decl = decl.merged(cli)
    if problems:
        report.diagnostics += problems
        return
    if not decl.declared:
        if decl.assumptions:
            report.diagnostics.append(error(
                "R110", "an assumption without a `# for-all:` line has nothing to restrict",
                decl.assumptions[0].span))
        return
    if any(d.is_error for d in report.diagnostics):
        return                   # the file's own instance is rejected: that comes first
    result = prove_family(loaded, decl)
    report.family = result
    report.diagnostics += result.diagnostics
    if result.counterexample is not None:
        result.instance = check_instance(loaded, result.counterexample, seed, max_memory)


def prove_family(loaded, decl: FamilyDecl) -> FamilyResult:
    start = time.perf_counter()
    result = FamilyResult(decl)
    try:
        _prove(loaded, decl, result)
    finally:
        result.ms = (time.perf_counter() - start) * 1000
    return result


def _r110(message: str, span: Span | None) -> Diagnostic:
    if span is None:
        raise DirectiveError(message)
    return error("R110", message, span)


def _prove(loaded, decl: FamilyDecl, result: FamilyResult) -> None:
    constants = loaded.program.constants
    for message, span in check_names(decl, loaded.source, constants):
        result.diagnostics.append(_r110(message, span))
    if result.diagnostics:
        return
    try:
        space = FamilySpace.of(decl, constants)
    except AssumptionError as exc:
        result.diagnostics.append(_r110(str(exc), decl.assumptions[0].span))
        return
    if not _file_is_member(decl, space, constants, result):
        return
    key = next(k for k, f in loaded.program.funcs.items() if f is loaded.func)
    symbolic = {s.name: size(s.name, constants[s.name]) for s in decl.sizes}
    with recording() as decisions:
        family = _lower(loaded, symbolic, key)
    if family is None:
        result.diagnostics.append(_r220("the program does not lower with symbolic sizes",
                                        loaded.func.span))
        return
    if _tile_sizes(family, decl, result):
        return
    second = _second_member(decl, space, constants, decisions)
    if second is not None:
        other = _lower(loaded, {n: size(n, v) for n, v in second.items()}, key)
        differs = ("the program does not lower", family.span.line) if other is None \
            else _differs(family, other)
        if differs is not None:
            what, line = differs
            result.diagnostics.append(_r220(
                f"a size steers the lowering where the proofs cannot follow: {what} "
                f"differs between the file's sizes and {size_text(second, space)}",
                _line_span(loaded.source, line)))
            return
    queries = _decision_queries(decisions, space)
    queries += [bounds_query(a, space) for a in global_accesses(family.kernel)]
    for reducer in _reducers(family):
        queries += _exactly_once_queries(family.kernel, space, reducer)
    for query in queries:
        result.proofs.append(solve(query, TIMEOUT_MS))
    result.proofs += _epoch_cases(loaded.func, family, space)
    for reducer in _reducers(family):
        result.proofs += _fast_path(loaded, family, space, reducer)
    _conclude(result, space, loaded.func.span, loaded.source)


def _file_is_member(decl, space: FamilySpace, constants, result) -> bool:
    values = {s.name: constants[s.name] for s in decl.sizes}
    for s in decl.sizes:
        if not s.lo <= values[s.name] <= s.hi:
            result.diagnostics.append(_r110(
                f"the file's `{s.name} = {values[s.name]}` is outside its range "
                f"{s.lo}..{s.hi}: the file's instance must be a member of the family",
                s.span))
    for a, fact in zip(decl.assumptions, space.facts[len(decl.sizes):]):
        pinned = z3.substitute(fact, *[(space.vars[n], z3.IntVal(v))
                                       for n, v in values.items()])
        if z3.is_false(z3.simplify(pinned)):
            result.diagnostics.append(_r110(
                f"the assumption `{a.text}` is false at the file's sizes "
                f"({size_text(values, space)})", a.span))
    return not result.diagnostics


def _lower(loaded, overrides: dict, key: str) -> ir.PrimFunc | None:
    try:
        return parse_source(loaded.source, loaded.path, overrides,
                            loaded.params).funcs.get(key)
    except DiagnosticError:
        return None


def _r220(message: str, span: Span | None, *notes: Note) -> Diagnostic:
    return error("R220", message, span, *notes)


# ----------------------------------------------------------------------------- structure

def _tile_sizes(func: ir.PrimFunc, decl: FamilyDecl, result: FamilyResult) -> bool:
    """R110 for each size that sets a tile shape or a thread count."""
    found: dict[str, str] = {}

    def mark(value, what: str) -> None:
        if is_symbolic(value):
            for name in value.sym.free_vars():
                found.setdefault(name, what)

    kernel = func.kernel
    mark(kernel.threads, "the thread count")
    for stmt in ir.walk(kernel.body):
        if isinstance(stmt, ir.ParallelFor):
            for n in stmt.extents:
                mark(n, f"the extent of the T.Parallel loop at line {stmt.span.line}")
        elif isinstance(stmt, ir.Alloc) and stmt.buffer.scope != "global":
            for n in stmt.buffer.shape:
                mark(n, f"the shape of {stmt.buffer.scope} buffer `{stmt.buffer.name}` "
                        f"(line {stmt.span.line})")
        elif isinstance(stmt, ir.SerialFor):
            mark(stmt.step, f"the step of the loop at line {stmt.span.line}")
            mark(stmt.num_stages, f"the stages of the loop at line {stmt.span.line}")
        elif isinstance(stmt, ir.WarpGroup):
            for g in stmt.groups:
                mark(g, f"the warp groups at line {stmt.span.line}")
    for s in decl.sizes:
        if s.name in found:
            result.diagnostics.append(_r110(
                f"`{s.name}` sets {found[s.name]}: tile sizes and thread counts stay "
                f"concrete; only problem sizes can be for-all", s.span))
    return bool(found)


def _second_member(decl, space: FamilySpace, constants, decisions) -> dict[str, int] | None:
    """Another member of the family where every compile-time decision comes out as at
    the file's sizes, every size moved from the file's value when that is possible."""
    solver = z3.Solver()
    solver.set(timeout=TIMEOUT_MS)
    solver.add(*space.facts)
    for d in decisions:
        holds = OPS[d.op](d.a.to_z3(space.vars), d.b.to_z3(space.vars))
        solver.add(holds if d.outcome else z3.Not(holds))
    # far from the file's values (a coincidence such as int(M / 2) being equal at two
    # neighbouring sizes is less likely): the range's top, else any other value
    for s in decl.sizes:
        v, value = space.vars[s.name], constants[s.name]
        for wish in ([v == s.hi] if s.hi != value else []) + [v != value]:
            solver.push()
            solver.add(wish)
            if solver.check() == z3.sat:
                break
            solver.pop()
    if solver.check() != z3.sat:
        return None
    model = solver.model()
    return {n: model.eval(v, model_completion=True).as_long() for n, v in space.vars.items()}


def _differs(a, b, seen=None) -> tuple[str, int] | None:
    """The first integer that is plain in a and not the same in b (a structural walk)."""
    seen = set() if seen is None else seen
    if isinstance(a, SizeInt) or isinstance(b, SizeInt):
        same = isinstance(a, SizeInt) and isinstance(b, SizeInt) and a.sym == b.sym
        return None if same else (f"the integer {int(a)}", 0)
    if type(a) is not type(b):
        return (f"a {type(a).__name__}", 0)
    if isinstance(a, (tuple, list)):
        if len(a) != len(b):
            return ("a list's length", 0)
        for x, y in zip(a, b):
            found = _differs(x, y, seen)
            if found is not None:
                return found
        return None
    if isinstance(a, dict):
        return _differs(list(a.items()), list(b.items()), seen)
    if is_dataclass(a) and not isinstance(a, type):
        if (id(a), id(b)) in seen:
            return None
        seen.add((id(a), id(b)))
        for f in fields(a):
            found = _differs(getattr(a, f.name), getattr(b, f.name), seen)
            if found is not None:
                what, line = found
                span = getattr(a, "span", None)
                if not line and span is not None and hasattr(span, "line"):
                    named = f" `{a.name}`" if isinstance(getattr(a, "name", None), str) else ""
                    what = f"{what} in the {f.name} of the {type(a).__name__}{named}"
                    line = span.line
                return what, line
        return None
    if isinstance(a, int) and not isinstance(a, bool) and a != b:
        return (f"the integer {a}", 0)
    return None


# ----------------------------------------------------------------------------- obligations

def _decision_queries(decisions, space: FamilySpace) -> list[Query]:
    out, seen = [], set()
    for d in decisions:
        key = (d.a, d.op, d.b, d.outcome)
        if key in seen or not (d.a.free_vars() or d.b.free_vars()):
            continue
        seen.add(key)
        where = f" (line {d.line})" if d.line else ""
        out.append(decision_query(d, where, space, d.line))
    return out


def _reducers(func: ir.PrimFunc) -> list[ir.Buffer]:
    return [s.buffer for s in ir.walk(func.kernel.body)
            if isinstance(s, ir.Alloc) and s.buffer.is_reducer]


def _exactly_once_queries(kernel: ir.Kernel, space: FamilySpace,
                          reducer: ir.Buffer) -> list[Query]:
    found = sources(kernel, space, reducer)
    out = []
    groups: dict[int, list] = {}
    for s in found:
        groups.setdefault(id(s.buffer), []).append(s)
    for group in groups.values():
        for a, b in itertools.combinations_with_replacement(group, 2):
            out.append(unique_query(a, b, space))
        out.append(covered_query(group, space))
    return out


def _epoch_cases(func: ir.PrimFunc, family: ir.PrimFunc, space: FamilySpace) -> list[ProofResult]:
    """The epoch verifier once per trip-count case the family reaches."""
    loops = size_loops(family.kernel)
    if not loops:
        return []
    twins = _twins(family, func)
    start = time.perf_counter()
    choices = []
    for loop, ctx in loops:
        enc = FamilyEncoder(ctx, space)
        choices.append([(case, text, enc.facts + [trip_case_term(loop, enc, case)])
                        for case, text in CASES])
    out = []
    for combo in itertools.product(*choices):
        constraints = space.facts + [c for _, _, cs in combo for c in cs]
        solver = z3.Solver()
        solver.set(timeout=TIMEOUT_MS)
        solver.add(*constraints)
        if solver.check() != z3.sat:
            continue
        trips = {twins[id(loop)]: (case, case) for (loop, _), (case, _, _) in zip(loops, combo)}
        errors = [d for d in check_func(func, trips) if d.is_error]
        if not errors:
            continue
        names = "; ".join(f"the loop at line {loop.span.line} {text}"
                          for (loop, _), (_, text, _) in zip(loops, combo))
        first = errors[0]

        def explain(w, first=first, names=names):
            return (f"at {size_text(w, space)} {names}: {first.code} at line "
                    f"{first.span.line}: {first.message}")
        query = Query(f"epochs when {names}", constraints, space.objectives(), explain,
                      first.span.line if first.span else None)
        out.append(solve(query, TIMEOUT_MS))
    name = "epochs for every trip count"
    if not out:
        out.append(ProofResult(name, PROVED, (time.perf_counter() - start) * 1000, None))
    return out


def _fast_path(loaded, family: ir.PrimFunc, space: FamilySpace,
               reducer: ir.Buffer) -> list[ProofResult]:
    """The plan decision's obligations (codegen.proofs.fast) for every member. They read
    an update site's layout (size-free: tile sizes and thread counts are concrete,
    checked above), its output index and the `if` conditions around it. A kernel
    compiled for a family is one kernel, so what must hold at every member is the plan
    chosen at the file's sizes: its partition and storage (or the canonical plan's
    layout facts).

    A condition is split into conjuncts (codegen.proofs.signature). One that is affine
    in the loop variables is a constraint of the site; read with the sizes symbolic
    (`k < K`), it mentions them. Any other conjunct that mentions a size (`ko * BLOCK_K
    + k < K`, with `ko` a serial loop's variable) mentions no thread either (the site
    would have a problem otherwise), so every replica of an iteration evaluates it
    alike: it switches whole iterations on or off. The proofs range over every
    iteration such a conjunct could leave enabled, so they already cover each member
    — those sites are the file's, formula for formula, and the file's proofs hold.
    Sites with symbolic constraints get the queries again, over the family's sizes
    (ranges and assumptions), and a refutation has its smallest sizes. An output index
    that mentions a size is not proved here (unknown, never a pass)."""
    name = f"fast path {reducer.name}"
    rs = reducer_sites(family, infer_layouts(family), reducer)
    sites = update_sites(rs.updates, rs.layouts, rs.participants, sizes=True)
    for site in sites:
        if site.output is not None and any(set(e.free_vars()) & set(site.sizes)
                                           for e in site.output):
            return [ProofResult(name, UNKNOWN, 0.0,
                                f"the output index of the update at line {site.line} "
                                f"depends on a size: the fast-path obligations are not "
                                f"proved for every size", line=site.line)]
    distinct = distinct_sites(sites)
    if not any(site.sizes for site in distinct):
        return [ProofResult(name, PROVED, 0.0, None)]
    file_reducer = _twins(family, loaded.func)[id(_alloc_of(family, reducer))].buffer
    chosen = search_fast(reducer_sites(loaded.func, loaded_layouts(loaded),
                                       file_reducer)).chosen
    plan = f"the fast plan of the file's sizes ({chosen.partition.describe()})" \
        if chosen is not None else "the canonical plan"
    queries = [q for site in distinct for q in (injective_query(site), guard_query(site))]
    if chosen is not None:
        queries += legality_queries(distinct, chosen, finalize_destinations(rs))
    return [solve(_in_family(q, space, name, plan), TIMEOUT_MS) for q in queries]


def _in_family(query: Query, space: FamilySpace, name: str, plan: str) -> Query:
    """query over the family's sizes: their facts added, minimized sizes first."""
    def explain(w: dict[str, int]) -> str:
        return f"at {size_text(w, space)} {plan} fails: {query.explain(w)}"
    return dataclasses.replace(query, name=f"{name}: {query.name}",
                               constraints=space.facts + list(query.constraints),
                               objectives=space.objectives() + list(query.objectives),
                               explain=explain, evidence=None)


def _alloc_of(func: ir.PrimFunc, buffer: ir.Buffer) -> ir.Alloc:
    return next(s for s in ir.walk(func.kernel.body)
                if isinstance(s, ir.Alloc) and s.buffer is buffer)


def _twins(family: ir.PrimFunc, concrete: ir.PrimFunc) -> dict[int, ir.Stmt]:
    """id(statement of the family lowering) -> the same statement of the concrete one."""
    return {id(a): b for a, b in zip(ir.walk(family.kernel.body),
                                     ir.walk(concrete.kernel.body))}


# ----------------------------------------------------------------------------- verdict

def _line_span(source: str, line: int) -> Span:
    """The statement text of a line (its first to its last non-blank column): a family
    obligation knows the line of the access or loop it is about, not its columns."""
    lines = source.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    start = len(text) - len(text.lstrip()) + 1
    return Span(line, start, line, max(start + 1, len(text.rstrip()) + 1))


def _conclude(result: FamilyResult, space: FamilySpace, span: Span, source: str) -> None:
    refuted = [p for p in result.proofs if p.result == REFUTED]
    unknown = [p for p in result.proofs if p.result not in (PROVED, REFUTED)]
    if refuted:
        order = list(space.vars)
        worst = min(refuted, key=lambda p: tuple(p.witness[n] for n in order))
        result.counterexample = {n: worst.witness[n] for n in order}
        line = worst.line or span.line
        result.diagnostics.append(_r220(
            f"not verified for all {space.decl.describe()}: {worst.counterexample}",
            _line_span(source, line),
            Note(f"{len(refuted)} of {len(result.proofs)} family obligations refuted; "
                 f"the smallest counterexample sizes are "
                 f"{size_text(result.counterexample, space)}")))
    elif unknown:
        p = unknown[0]
        line = p.line or span.line
        result.diagnostics.append(_r220(
            f"not proved for all {space.decl.describe()}: `{p.name}` is {p.result} "
            f"({p.counterexample})", _line_span(source, line)))

