"""Size families (issue 15, part 1; docs/design.md §21): symbolic sizes, the directives
and flags, the family proofs, the smallest counterexample and the instance run there,
the JSON document, and the time budget."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from verify_reducer.spec.frontend import parse_source
from verify_reducer.spec.frontend.family import DirectiveError, parse_cli, read_family
from verify_reducer.spec.indexexpr import var
from verify_reducer.spec.symbolic import SizeInt, recording, size
from verify_reducer.verify.cli.commands import main
from verify_reducer.verify.oracle.pipeline import UsageError, check

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
FAMILY = ROOT / "tests" / "programs" / "family"
FAMILY_EXAMPLES = ["gemv_family.py", "two_sites_family.py", "serial_epochs.py",
                   "gemv_tail_family.py"]


def test_size_int_keeps_the_symbol_through_index_arithmetic():
    m = size("M", 16)
    blocks = -(-m // 2)                       # T.ceildiv(M, 2)
    assert blocks == 8 and isinstance(blocks, SizeInt)
    assert blocks.sym.evaluate({"M": 17}) == 9
    assert (3 * m + 1).sym == 3 * var("M") + 1
    # what index expressions cannot say falls back to the plain int
    assert type(m / 2) is float and type(m // m) is int and type(2 ** m) is int


def test_ordering_comparisons_on_sizes_are_recorded_decisions():
    m = size("M", 16)
    with recording() as found:
        assert max(m, 4) == 16 and m > 4
        assert {16: "a"}[m] == "a"            # equality and hashing stay the int's
    assert [(d.op, d.outcome) for d in found][-1] == (">", True)
    assert all(d.a == var("M") or d.b == var("M") for d in found)
    assert m > 4                              # outside recording: nothing is kept


def test_family_lowering_carries_symbols_into_shapes_grid_and_loops():
    source = (EXAMPLES / "gemv_family.py").read_text()
    func = parse_source(source, "g.py", {"M": size("M", 16), "K": size("K", 1000)}).func()
    assert [str(s.sym) for s in func.params[0].shape] == ["M", "K"]
    assert func.kernel.grid[0].sym.evaluate({"M": 5}) == 3
    plain = parse_source(source, "g.py").func()
    assert not any(isinstance(s, SizeInt) for s in plain.params[0].shape)


def test_directives_are_read_from_the_leading_comments():
    decl, problems = read_family("# for-all: M in 1..2**20, K in 4..8\n"
                                 "# assume: M % 2 == 0\nimport x\n")
    assert not problems
    assert decl.describe() == "M in [1, 1048576], K in [4, 8] (assuming M % 2 == 0)"
    assert decl.sizes[1].span.line == 1 and decl.sizes[1].span.col == 27


@pytest.mark.parametrize("flags, message", [
    (["M=8..1"], "empty"), (["M=1-8"], "NAME=LO..HI"), (["M=1..x"], "integer literal"),
    (["M=1..8", "M=2..4"], "twice"), (["M=1..2**40"], "2**31")])
def test_bad_for_all_flags(flags, message):
    with pytest.raises(DirectiveError, match=message.replace("*", r"\*")):
        parse_cli(flags, [])


def test_bad_assume_flag():
    with pytest.raises(DirectiveError, match="cannot parse"):
        parse_cli(["M=1..8"], ["M +"])
    with pytest.raises(DirectiveError, match="condition"):
        parse_cli(["M=1..8"], ["M + 1"])


@pytest.mark.parametrize("name", FAMILY_EXAMPLES)
def test_family_examples_are_verified_within_the_budget(name):
    report = check(str(EXAMPLES / name))
    assert report.verdict == "verified"
    family = report.family
    assert family is not None and family.verified
    assert family.proofs and all(p.proved for p in family.proofs)
    assert family.ms < 2000 * len(report.epochs)       # under 2 s per reducer
    names = {p.name.split()[0] for p in family.proofs}
    # serial_epochs has no global read that drives a reducer; gemv_tail_family moves
    # its tensors by copies alone, which are clipped at the border (no bounds query)
    wanted = {"serial_epochs.py": {"epochs", "fast"},
              "gemv_tail_family.py": {"exactly-once", "epochs", "fast"}}
    assert wanted.get(name, {"bounds", "exactly-once", "epochs", "fast"}) <= names


def test_a_loop_variable_only_a_guard_mentions_keeps_its_range_in_the_bounds_proof():
    """Regression: `y[i]` under `if i < k`, k in 0..63, is in bounds for every N >= 64;
    the bounds query copied the variables' ranges before encoding the guard, lost k's,
    and refuted the write at N=64 with k=65."""
    report = check(str(ROOT / "tests" / "programs" / "family" / "guard_only_loop_var.py"))
    assert report.verdict == "verified"
    assert report.family.verified
    assert any(p.name.startswith("bounds") and p.proved for p in report.family.proofs)


def test_gemv_without_tail_gets_smallest_counterexample_and_concrete_failure():
    report = check(str(FAMILY / "gemv_no_tail.py"))
    family = report.family
    assert family.counterexample == {"M": 1, "K": 1}
    r220 = [d for d in report.diagnostics if d.code == "R220"]
    assert len(r220) == 1 and "reads A[0, 1] outside its shape [1, 1]" in r220[0].message
    instance = family.instance
    assert instance.verdict == "rejected" and instance.sizes == {"M": 1, "K": 1}
    assert [d.code for d in instance.errors] == ["R102"]
    assert "out of bounds of A [1, 1]" in instance.errors[0].message
    # the interpreter and the simulator each run to their own first error: both read
    # past the row at these sizes
    found = {e.label: e for e in instance.executions}
    assert set(found) == {"interp", "sim/auto"}
    for e in found.values():
        assert e.status == "stopped" and [d.code for d in e.diagnostics] == ["R102"]
        assert "out of bounds of A [1, 1]" in e.diagnostics[0].message
    assert found["sim/auto"].diagnostics[0].span.line == 34


def test_instance_report_shows_each_executor(capsys):
    assert main(["check", str(FAMILY / "gemv_no_tail.py")]) == 1
    out = capsys.readouterr().out
    assert "instance       M=1, K=1: rejected (R102 at 34:36" in out
    assert "the whole grid (1 block), memory estimate" in out
    assert "interp: stopped: R102 at 34:36: index [0, 1] is out of bounds of A" in out
    assert "sim/auto: stopped: R102 at 34:36: index [0, 1] is out of bounds of A" in out


def test_instance_at_a_huge_size_samples_blocks_and_keeps_the_memory_limit():
    from verify_reducer.verify.family.instance import check_instance
    from verify_reducer.verify.oracle.pipeline import load
    loaded = load(str(FAMILY / "gemv_no_tail.py"))
    # 2^19 blocks: the classes and the seeded sample run, not the grid
    wide = check_instance(loaded, {"M": 1 << 20, "K": 1}, 0, 1 << 30)
    assert wide.sampled == (4, 1 << 19) and wide.to_json()["sampled"] == \
        {"blocks": 4, "total": 1 << 19}
    assert [e.status for e in wide.executions] == ["stopped", "stopped"]
    # A alone would be over 2^34 elements; the sample's windows are estimated and refused
    # over the limit before anything runs (1024 trips a block: within the runs and the
    # work a check executes, docs/limits.md)
    huge = check_instance(loaded, {"M": 1 << 20, "K": 24 * 1024 - 1}, 0, 2 << 20)
    assert huge.verdict == "not run" and huge.executions == []
    assert "over --max-memory 2.0 MiB" in huge.not_run
    assert huge.report.estimate.total < 1 << 30
    # 4096 trips a block: 4 × 4096 runs of a ten-statement body, about 40 s of check,
    # past the work a run may do (spec/run_cost.py): refused before the estimate
    longer = check_instance(loaded, {"M": 1 << 20, "K": 24 * 4096 - 1}, 0, 8 << 20)
    assert longer.verdict == "rejected" and longer.executions == []
    assert "units of work" in longer.not_run


def test_the_predicated_gemv_needs_its_assumption_when_the_output_is_copied():
    # gemv_nondividing copies two rows per block: odd M leaves the tensor
    gemv = str(EXAMPLES / "gemv_nondividing.py")
    refuted = check(gemv, family=parse_cli(["M=1..1048576", "K=1..1048576"], []))
    assert refuted.family.counterexample == {"M": 1, "K": 1}
    proved = check(gemv, family=parse_cli(["M=1..1048576", "K=1..1048576"],
                                          ["M % BLOCK_M == 0"]))
    assert proved.verdict == "verified" and proved.family.verified


def test_zero_trip_loop_is_an_epoch_case_of_the_family():
    report = check(str(FAMILY / "zero_trip.py"))
    family = report.family
    epochs = [p for p in family.proofs if p.name.startswith("epochs")]
    assert any(p.result == "refuted" and "runs zero times" in p.counterexample
               and "R200" in p.counterexample for p in epochs)
    assert family.counterexample == {"N": 1}
    assert [d.code for d in family.instance.errors] == ["R200"]
    # the static checks reject the instance; the interpreter and both simulated plans
    # still run there and meet the read of a reducer that was never finalized
    runs = family.instance.executions
    assert [e.label for e in runs] == ["interp", "sim/auto", "sim/canonical"]
    assert all(e.status == "stopped" and e.diagnostics[0].code == "R200" for e in runs)


def test_cli_flags_and_usage_errors(capsys):
    gemv = str(EXAMPLES / "gemv_nondividing.py")
    code = main(["check", gemv, "--for-all", "M=1..64", "--assume", "M % BLOCK_M == 0"])
    out, _ = capsys.readouterr()
    assert code == 0 and "verified for all M in [1, 64] (assuming M % BLOCK_M == 0)" in out
    assert main(["check", gemv, "--for-all", "M=9..1"]) == 2
    assert "empty" in capsys.readouterr().err
    assert main(["check", gemv, "--for-all", "NOPE=1..8"]) == 2
    assert "unknown name `NOPE`" in capsys.readouterr().err
    with pytest.raises(UsageError, match="dtype"):
        check(gemv, family=parse_cli(["dtype=1..8"], []))


def test_json_document_carries_the_family(capsys):
    pytest.importorskip("jsonschema")
    code = main(["check", str(FAMILY / "gemv_no_tail.py"), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    family = doc["family"]
    assert family["counterexample"] == {"M": 1, "K": 1} and not family["verified"]
    instance = family["instance"]
    assert instance["verdict"] == "rejected" and instance["sizes"] == {"M": 1, "K": 1}
    assert [(r["label"], r["status"], r["diagnostics"][0]["code"]) for r in instance["runs"]] \
        == [("interp", "stopped", "R102"), ("sim/auto", "stopped", "R102")]
    assert instance["sampled"] is None and instance["memory"] > 0
    assert all(isinstance(p["ms"], float) for p in family["proofs"])
    from verify_reducer.json_schemas import validator
    assert not list(validator("check").iter_errors(doc))


def test_update_predicated_on_a_size_keeps_the_fast_plan_for_every_size():
    # `ko * BLOCK_K + k < K` around the update mentions K and no thread: every replica
    # of an iteration evaluates it alike, so the file's fast-path proofs hold for all
    report = check(str(EXAMPLES / "gemv_tail_family.py"))
    assert report.verdict == "verified" and report.family.verified
    assert [e.plan for e in report.epochs] == ["fast"]
    fast = [p for p in report.family.proofs if p.name.startswith("fast path")]
    assert [(p.name, p.result) for p in fast] == [("fast path acc", "proved")]


def test_size_predicate_that_breaks_the_file_fast_plan_has_its_smallest_size():
    report = check(str(FAMILY / "fast_path_size.py"))
    family = report.family
    assert family.counterexample == {"N": 9}
    r220 = [d for d in report.diagnostics if d.code == "R220"]
    assert len(r220) == 1 and r220[0].span.line == 30
    assert r220[0].message.endswith(
        "at N=9 the fast plan of the file's sizes (width 8) fails: width 8: the site at "
        "line 30 puts iterations j=0 and j=8 of acc[0] in groups {0..7} and {8..15}: "
        "j=8 is missing from group {0..7}")
    refuted = {p.name for p in family.proofs if p.result == "refuted"}
    assert refuted and all(n.startswith("fast path acc: ") for n in refuted)
    # at N=9 the member's own plans agree with the interpreter; the plan of the file's
    # sizes, simulated there, loses iteration j=8
    runs = {e.label: e for e in family.instance.executions}
    assert [runs[k].status for k in ("interp", "sim/auto", "sim/canonical")] == ["ok"] * 3
    lost = runs["sim/file-plan"]
    assert lost.status == "violations" and lost.diagnostics[0].code == "R503"
    assert "thread 8 has no partial of acc[0]" in lost.diagnostics[0].message
    assert family.instance.verdict == "mismatch"


def test_size_predicate_proved_symbolically_where_the_file_plan_holds():
    # with N at most 8 the width-8 plan holds for every member: the queries read `j < N`
    # with N symbolic and are proved, not assumed from the file's N
    report = check(str(FAMILY / "fast_path_size.py"), family=parse_cli(["N=1..8"], []))
    assert report.verdict == "verified" and report.family.verified
    fast = [p for p in report.family.proofs if p.name.startswith("fast path")]
    names = {p.name.split(": ")[1].split(" line")[0] for p in fast}
    assert {"injective", "guard", "exactly-once", "sites agree", "storage complete"} <= names
    assert all(p.proved for p in fast)


def test_a_site_built_with_sizes_reads_them_as_symbols():
    from verify_reducer.codegen.layout import infer_layouts
    from verify_reducer.codegen.plan_sites import gather_reducers
    from verify_reducer.codegen.proofs.signature import update_sites
    source = (FAMILY / "fast_path_size.py").read_text()
    func = parse_source(source, "f.py", {"N": size("N", 8)}).func()
    (rs,) = gather_reducers(func, infer_layouts(func))
    for sizes, bound in ((True, "N"), (False, "8")):
        (site,) = update_sites(rs.updates, rs.layouts, rs.participants, sizes=sizes)
        assert [str(c) for c in site.constraints] == [f"j < {bound}"]
        assert site.sizes == (("N",) if sizes else ())
