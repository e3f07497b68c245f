"""tests/upstream_tilelang.py (TileLang itself on the upstream corpus), on this machine:
its per-kernel function against a fake TileLang (tests/fake_tilelang.py, extended here
with what the corpus needs: typed `T.Tensor` annotations, `@tilelang.jit` lazy and eager,
out_idx), on real corpus files — a module-level prim_func, a plain factory, a refused
lazy `@tilelang.jit` and a refused eager one — and its subprocess driver without
TileLang. The fake computes what the test tells it; what is checked is the script's
plumbing: which kernel it finds, how it calls it, what it compares, what the row says."""
from __future__ import annotations

import inspect
import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import upstream_tilelang as measured
from fake_tilelang import FakeTileLang, _Tensor
from verify_reducer.codegen import tilelang_backend
from verify_reducer.spec.dtypes import DTYPES, lookup

CORPUS = Path(__file__).resolve().parent / "upstream"


class _TensorType:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype


class _PrimFunc:
    """`@T.prim_func` on a function whose annotations are `T.Tensor(shape, dtype)`."""

    def __init__(self, fn=None, *, name=None, buffers=None, out_idx=None):
        if fn is not None:
            name = fn.__name__
            buffers = [(n, a.shape, a.dtype) for n, a in fn.__annotations__.items()]
        self.attrs = {"global_symbol": name}
        self.params = [n for n, _, _ in buffers]
        self.buffer_map = {n: types.SimpleNamespace(name=n, shape=s, dtype=d)
                           for n, s, d in buffers}
        self.out_idx = out_idx


class _Kernel:
    """A compiled kernel as TileLang's adapter calls it: the parameters not in out_idx
    in, the out_idx ones allocated and returned (one tensor, or a list)."""

    def __init__(self, fake, prim_func, out_idx):
        self.fake, self.prim_func = fake, prim_func
        out_idx = [] if out_idx is None else [out_idx] if isinstance(out_idx, int) else out_idx
        self.out_idx = [i % len(prim_func.params) for i in out_idx]

    def __call__(self, *inputs):
        names, given = self.prim_func.params, iter(inputs)
        arrays = {}
        for i, name in enumerate(names):
            buffer = self.prim_func.buffer_map[name]
            arrays[name] = (np.zeros(buffer.shape, lookup(buffer.dtype).np)
                            if i in self.out_idx else next(given).array)
        self.fake.ran.append({n: a.copy() for n, a in arrays.items()})
        if self.fake.fail_at == "run":
            raise self.fake.failure
        for name, value in self.fake.respond(arrays).items():
            arrays[name][...] = value
        outs = [_Tensor(arrays[names[i]]) for i in self.out_idx]
        return outs[0] if len(outs) == 1 else outs


class _Jit:
    """`@tilelang.jit`: lazy (the function returns a prim_func) unless the test declared
    the function eager (fake.eager[name]: its tensors' dtypes and its outputs)."""

    def __init__(self, fake, fn, out_idx, pass_configs, compile_flags=None):
        self.fake, self.fn, self.out_idx = fake, fn, out_idx
        self.pass_configs, self.compile_flags = pass_configs, compile_flags
        self.signature = inspect.signature(fn)

    def get_tir(self, **kwargs):
        dtypes, outputs = self.fake.eager[self.fn.__name__]
        tensors = [(n, v.array.shape, dtypes[n]) for n, v in kwargs.items()
                   if isinstance(v, _Tensor)]
        made = outputs({n: s for n, s, _ in tensors}, kwargs)
        return _PrimFunc(name=self.fn.__name__, buffers=tensors + made,
                         out_idx=list(range(len(tensors), len(tensors) + len(made))))

    def __call__(self, **kwargs):
        self.fake.calls.append({k: v for k, v in kwargs.items()
                                if not isinstance(v, _Tensor)})
        if self.fn.__name__ in self.fake.eager:
            prim_func = self.get_tir(**kwargs)
            kernel = self.fake.compile(prim_func, out_idx=prim_func.out_idx,
                                       pass_configs=self.pass_configs,
                                       compile_flags=self.compile_flags)
            return kernel(*[v for v in kwargs.values() if isinstance(v, _Tensor)])
        return self.fake.compile(self.fn(**kwargs), out_idx=self.out_idx,
                                 pass_configs=self.pass_configs,
                                 compile_flags=self.compile_flags)


class CorpusFake(FakeTileLang):
    def __init__(self, respond=None, eager=None, **kwargs):
        super().__init__(respond=respond, listing=None, **kwargs)
        self.eager = eager or {}
        self.calls: list[dict] = []          # a @tilelang.jit's non-tensor arguments

    def install(self, monkeypatch) -> None:
        super().install(monkeypatch)
        tilelang, language = sys.modules["tilelang"], sys.modules["tilelang.language"]
        language.prim_func = _PrimFunc
        language.Tensor = _TensorType
        for name in [*DTYPES, "float", "half"]:
            setattr(language, name, lookup(name).name)

        def jit(fn=None, *, out_idx=None, pass_configs=None, compile_flags=None, **_):
            def wrap(f):
                return _Jit(self, f, out_idx, pass_configs, compile_flags)
            return wrap(fn) if fn is not None else wrap
        tilelang.jit, tilelang.compile = jit, self.compile
        for sub in ("testing", "layout"):
            monkeypatch.setitem(sys.modules, f"tilelang.{sub}", types.ModuleType(sub))
        monkeypatch.setattr(tilelang_backend, "_prim_func_types", lambda: (_PrimFunc,))

    def compile(self, prim_func, out_idx=None, target=None, pass_configs=None,
                compile_flags=None, **_):
        self.compiled.append({"out_idx": out_idx, "target": target,
                              "pass_configs": pass_configs, "compile_flags": compile_flags})
        if self.fail_at == "compile":
            raise self.failure
        return _Kernel(self, prim_func, out_idx)


def _row(name: str):
    return measured.measure(CORPUS / f"{name}.py")


# ----------------------------------------------------------------------------- prim_func

def test_a_module_level_prim_func_equal_to_the_reference(monkeypatch):
    fake = CorpusFake(respond=lambda a: {"B": a["A"].max(axis=1)})
    fake.install(monkeypatch)
    row = _row("rv2_max")
    assert (row.outcome, row.result, row.judged) == ("equal", "equal", "exact")
    assert (row.today, row.bound, row.tilelang) == ("ok", "—", "0.1.15")
    assert row.detail == ["equal B"]
    assert fake.compiled == [{"out_idx": None, "target": "cuda", "pass_configs": None,
                              "compile_flags": ["-fmad=false"]}]
    assert fake.ran[0]["A"].shape == (16, 64) and fake.ran[0]["A"].dtype == np.float32


def test_a_wrong_value_is_counted_with_its_largest_error(monkeypatch):
    CorpusFake(respond=lambda a: {"B": a["A"].max(axis=1) - 1}).install(monkeypatch)
    row = _row("rv2_max")
    assert row.outcome == "differs"
    assert row.result == "differs: B: 16 of 16 elements, max error 1"


def test_the_headers_pass_configs_reach_compile(monkeypatch):
    fake = CorpusFake(respond=lambda a: {"B": [a["A"].astype(np.float64).sum()]})
    fake.install(monkeypatch)
    row = _row("finalize_short_extent")
    assert row.outcome == "equal", row.result
    assert fake.compiled[0]["pass_configs"] == {"tl.disable_warp_specialized": True,
                                                "tl.disable_tma_lower": True}


@pytest.mark.parametrize("stage, kind", [("compile", "compile error"), ("run", "run error")])
def test_tilelangs_failures_are_reported_with_their_stage(monkeypatch, stage, kind):
    CorpusFake(fail_at=stage).install(monkeypatch)
    row = _row("rv2_max")
    assert row.outcome == kind
    assert row.result == f"{kind}: RuntimeError: Check failed: reducer plan"


def test_a_file_tilelang_cannot_import_is_a_compile_error(monkeypatch):
    CorpusFake().install(monkeypatch)

    def traced(path):                     # TileLang's frontend raising while it traces
        raise ValueError("Failed to build prim_func from kernel")
    monkeypatch.setattr(tilelang_backend, "load_program_module", traced)
    row = _row("rv2_max")
    assert row.result == ("compile error: importing the file: ValueError: Failed to build "
                          "prim_func from kernel")


# ----------------------------------------------------------------------------- factories

def test_a_plain_factory_is_called_with_the_headers_params(monkeypatch):
    fake = CorpusFake(respond=lambda a: {"B": a["A"].astype(np.float64).sum(axis=1)})
    fake.install(monkeypatch)
    row = _row("rv2_rowsum_fp16")
    assert (row.today, row.bound) == ("refused: factory-param-without-default", "ok")
    assert (row.outcome, row.judged) == ("equal", "exact"), row.result
    assert fake.ran[0]["A"].shape == (32, 64) and fake.ran[0]["A"].dtype == np.float16


def test_a_lazy_jit_factory_is_called_with_the_headers_params(monkeypatch):
    """atomic_add_3d: a lazy @tilelang.jit, refused as written (its parameters have no
    defaults) and verified bound, so TileLang's answer is judged exactly."""
    fake = CorpusFake(respond=lambda a: {"B": a["B"] + a["A"].sum(axis=0)})
    fake.install(monkeypatch)
    row = _row("atomic_add_3d")
    assert (row.today, row.bound) == ("refused: factory-param-without-default", "ok")
    assert (row.outcome, row.judged) == ("equal", "exact"), row.result
    assert fake.calls == [dict(K=4, M=64, N=64, block_M=32, block_N=32, dtype="float32")]
    assert fake.ran[0]["A"].shape == (4, 64, 64)
    # compiled as the reference rounds: no fused multiply-add (docs/semantics.md §8)
    assert fake.compiled[0]["compile_flags"] == ["-fmad=false"]


def _gemm_fake(respond) -> CorpusFake:
    def outputs(shapes, params):
        return [("C", (shapes["A"][0], shapes["B"][1]), "float16")]
    return CorpusFake(respond=respond,
                      eager={"matmul": ({"A": "float16", "B": "float16"}, outputs)})


def test_an_eager_jit_gets_tensors_and_returns_its_outputs(monkeypatch):
    fake = _gemm_fake(lambda a: {"C": a["A"].astype(np.float32) @ a["B"].astype(np.float32)})
    fake.install(monkeypatch)
    row = _row("gemm")
    assert (row.today, row.bound) == ("refused: factory-param-without-default", "ok")
    assert (row.outcome, row.judged) == ("equal", "exact"), row.result
    # the sizes M, N, K come from the tensors, not as arguments
    assert fake.calls == [dict(block_M=128, block_N=128, block_K=32)]
    assert [n for n in fake.ran[0]] == ["A", "B", "C"]
    assert fake.ran[0]["A"].dtype == np.float16 and fake.ran[0]["B"].shape == (256, 256)


def test_an_eager_jits_wrong_output_is_outside_the_bound(monkeypatch):
    _gemm_fake(lambda a: {"C": a["A"].astype(np.float32) @ a["B"].astype(np.float32) + 1}) \
        .install(monkeypatch)
    row = _row("gemm")
    assert row.outcome == "differs"
    assert row.result.startswith("differs: C: ") and "of 65536 elements" in row.result


def test_the_tolerance_is_the_dtypes():
    f16 = lookup("float16")            # 8 eps = 2^-7 of |want|, or of max|want| / 16
    assert measured.within_tolerance(np.array([1 + 2 ** -8, 100.5, 0.0], np.float16),
                                     np.array([1.0, 100.0, 0.0]), f16).all()
    # near zero the floor holds: 0.005 from 0 is within 2^-7 of max|want| / 16 = 1
    assert list(measured.within_tolerance(np.array([1.01, 0.005, 16.0], np.float16),
                                          np.array([1.0, 0.0, 16.0]), f16)) == \
        [False, True, True]
    e4m3 = lookup("float8_e4m3fn")    # one step of the grid: 0.125 at 1
    assert measured.within_tolerance(np.array([1.125], np.float32), np.array([1.0]), e4m3)
    assert not measured.within_tolerance(np.array([1.25], np.float32), np.array([1.0]),
                                         e4m3)[0]
    assert measured.within_tolerance(np.array([np.nan]), np.array([np.nan]),
                                     lookup("float32")).all()
    assert not measured.within_tolerance(np.array([3]), np.array([2]), lookup("int32"))[0]


# ----------------------------------------------------------------------------- the driver

def test_rows_make_the_table_and_the_summary():
    rows = [measured.Row("b", "ok", "—", "exact", "equal", "equal", 1.25),
            measured.Row("a", "refused: gemm", "refused: gemm", "tolerance", "compile error",
                         "compile error: x | y", 3.0)]
    assert measured.table(rows).splitlines()[2:] == [
        "| a | refused: gemm | refused: gemm | compile error: x \\| y | tolerance | 3.0 |",
        "| b | ok | — | equal | exact | 1.2 |"]
    assert measured.summary(rows) == ("TileLang equals the reference on 1 of 2; our check "
                                      "verifies 1 (today) / 1 (bound)")


def test_the_first_line_of_an_error_skips_the_traceback():
    message = ("InternalError: Traceback (most recent call last):\n  File \"x.py\", line 3\n"
               "  [bt] (0) libtvm.so\n1: foo\nCheck failed: (n > 0) is false: bad extent\n")
    assert measured.first_line(message) == "Check failed: (n > 0) is false: bad extent"


@pytest.mark.skipif(tilelang_backend.unavailable_reason() is None,
                    reason="TileLang can run here")
def test_in_a_subprocess_without_tilelang_the_row_says_so():
    row = measured.run_one_in_subprocess(CORPUS / "rv2_max.py")
    assert row.outcome == "not runnable" and "TileLang is not installed" in row.result
    assert (row.kernel, row.today, row.judged) == ("rv2_max", "ok", "exact")


def test_a_kernel_past_its_time_is_killed_and_named():
    row = measured.run_one_in_subprocess(CORPUS / "rv2_max.py", timeout_s=0.2)
    assert row.result == "not runnable: no result within 0.2 s (stage: start)"


def test_main_prints_the_sorted_table_and_the_summary_and_writes_json(
        monkeypatch, capsys, tmp_path):
    def fake_run(path):                   # the subprocess's row, as measure() makes it
        equal = path.stem == "rv2_max"
        return measured.Row(path.stem, *measured.our_verdicts(path),
                            "exact" if measured.verified(path) else "tolerance",
                            "equal" if equal else "run error",
                            "equal" if equal else "run error: CUDA error: misaligned", 2.0,
                            tilelang="0.1.15")
    monkeypatch.setattr(measured, "run_one_in_subprocess", fake_run)
    monkeypatch.setattr(tilelang_backend, "unavailable_reason", lambda: None)
    out = tmp_path / "rows.json"
    assert measured.main(["--only", "rv2_max", "gemm", "--jobs", "2", "--json", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "TileLang 0.1.15 on the upstream corpus (2 kernels)"
    rows = [line for line in printed if line.startswith("| ") and "kernel" not in line]
    assert rows == [
        "| gemm | refused: factory-param-without-default | ok | run error: CUDA "
        "error: misaligned | exact | 2.0 |",
        "| rv2_max | ok | — | equal | exact | 2.0 |"]
    assert printed[-1] == ("TileLang equals the reference on 1 of 2; our check verifies "
                           "1 (today) / 2 (bound)")
    doc = json.loads(out.read_text())
    assert [r["kernel"] for r in doc["rows"]] == ["gemm", "rv2_max"]
    assert doc["tilelang"] == "0.1.15" and doc["summary"] == printed[-1]


def test_main_refuses_an_unknown_kernel(capsys):
    with pytest.raises(SystemExit) as stop:
        measured.main(["--only", "no_such_kernel"])
    assert stop.value.code == 2
    assert "no such kernel in tests/upstream/: no_such_kernel" in capsys.readouterr().err
