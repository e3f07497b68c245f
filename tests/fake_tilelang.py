"""A stand-in for TileLang, torch and TVM, for tests that pin the TileLang backend's
plumbing on a machine without them (no GPU, no tilelang).

    fake = FakeTileLang(respond=lambda arrays: {"out": ...})
    fake.install(monkeypatch)

What it fakes, and only that:
- `import tilelang.language as T` in a program file: `@T.prim_func` records the
  function's name and parameters (the body never runs); every other `T.` name is an
  inert object, so signature annotations like `T.Tensor((8,), T.float32)` evaluate.
- `tilelang.compile(prim_func, out_idx=..., target=..., pass_configs=...)`: records its
  keyword arguments in `compiled` and the path of the program file in `program`, and
  returns a kernel that hands the tensors' arrays (by parameter name) to `respond`,
  whose returned arrays are written into them.
- the pass-config keys TileLang can list: through TVM's `PassContext.list_configs()`
  (with types: `listing="tvm"`), through `tilelang.transform.PassConfigKey` only
  (`listing="enum"`), or not at all (`listing=None`).
- torch: host arrays wrapped as tensors; `.to`, `.cpu`, `.numpy`, `cuda.synchronize`."""
from __future__ import annotations

import enum
import sys
import types

import numpy as np

from verify_reducer.codegen import tilelang_backend

# A few of TileLang 0.1.15's registered keys with TVM's type names (src/op/builtin.cc).
KNOWN_CONFIGS = {
    "tl.reducer_force_baseline": "bool",
    "tl.enable_reducer_plan_verbose": "bool",
    "tl.config_index_bitwidth": "IntImm",
    "tl.pass_profile_threshold_ms": "FloatImm",
    "tl.layout_cost_model": "ffi.String",
    "tl.device_compile_flags": "ffi.Array",
    "tl.Simplify": "tl.transform.SimplifyConfig",
}


class _Inert:
    """Whatever a program's module-level code asks of `T.` besides prim_func."""

    def __call__(self, *args, **kwargs):
        return self

    def __getattr__(self, name):
        return self

    def __getitem__(self, key):
        return self


class FakePrimFunc:
    def __init__(self, fn):
        names = fn.__code__.co_varnames[:fn.__code__.co_argcount]
        self.path = fn.__code__.co_filename       # the program file that defined it
        self.attrs = {"global_symbol": fn.__name__}
        self.params = list(names)
        self.buffer_map = {name: types.SimpleNamespace(name=name) for name in names}


class _Tensor:
    def __init__(self, array: np.ndarray):
        self.array = array

    def to(self, *_):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.array


class FakeTileLang:
    def __init__(self, respond=None, version: str = "0.1.15", listing: str | None = "tvm",
                 fail_at: str | None = None, failure: Exception | None = None):
        self.respond = respond or (lambda arrays: {})
        self.version = version
        self.listing = listing
        self.fail_at = fail_at              # "compile" | "run" | None
        self.failure = failure or RuntimeError("Check failed: reducer plan")
        self.compiled: list[dict] = []      # compile's keyword arguments, per call
        self.program: str | None = None     # the file of the prim_func compiled last
        self.ran: list[dict[str, np.ndarray]] = []

    # ----------------------------------------------------------------- the modules

    def install(self, monkeypatch) -> None:
        tilelang = types.ModuleType("tilelang")
        tilelang.__version__ = self.version
        tilelang.compile = self._compile
        language = types.ModuleType("tilelang.language")
        language.prim_func = FakePrimFunc
        language.__getattr__ = lambda name: _Inert()
        tilelang.language = language
        if self.listing == "enum":
            tilelang.transform = types.SimpleNamespace(PassConfigKey=enum.Enum(
                "PassConfigKey", {k.replace(".", "_").upper(): k for k in KNOWN_CONFIGS}
                | {"SUB_KEY": "enable_simplify_let_inline"}, type=str))
        monkeypatch.setitem(sys.modules, "tilelang", tilelang)
        monkeypatch.setitem(sys.modules, "tilelang.language", language)
        monkeypatch.setitem(sys.modules, "tvm", self._tvm() if self.listing == "tvm"
                            else None)
        torch = types.SimpleNamespace(
            from_numpy=lambda a: _Tensor(np.array(a)), bfloat16="bfloat16",
            float32="float32", cuda=types.SimpleNamespace(synchronize=lambda: None))
        monkeypatch.setattr(tilelang_backend, "_runtime", lambda: (tilelang, torch))
        monkeypatch.setattr(tilelang_backend, "_prim_func_types", lambda: (FakePrimFunc,))

    @staticmethod
    def _tvm():
        tvm = types.ModuleType("tvm")
        listed = {key: {"type": kind} for key, kind in KNOWN_CONFIGS.items()}
        tvm.transform = types.SimpleNamespace(PassContext=types.SimpleNamespace(
            list_configs=lambda: listed))
        return tvm

    # ----------------------------------------------------------------- compile and run

    def _compile(self, prim_func, **kwargs):
        self.compiled.append(kwargs)
        self.program = prim_func.path
        if self.fail_at == "compile":
            raise self.failure
        names = list(prim_func.params)

        def kernel(*tensors):
            arrays = {name: t.array for name, t in zip(names, tensors)}
            self.ran.append({n: a.copy() for n, a in arrays.items()})
            if self.fail_at == "run":
                raise self.failure
            for name, value in self.respond(arrays).items():
                arrays[name][...] = value
        return kernel
