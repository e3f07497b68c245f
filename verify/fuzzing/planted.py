"""Planted-code programs: kernels carrying a payload that creates a *canary* file if the
program is ever executed — at import (a statement, an import, exec, a class body, an
f-string, a walrus), while defining main (a decorator, a default argument, an
annotation), while reading a shape or a size (a call inside T.Tensor, T.Kernel or
T.Parallel), in a helper the kernel calls, in the `# input:` lines, behind a getattr
trick, or hidden by a `# -*- coding: utf-7 -*-` cookie that turns a comment into a
statement for Python.

The tool reads a program and never runs it (except `run --backend tilelang`, which
imports the file by design and is not a campaign command): after every command of the
campaign the canary must not exist (verify.fuzzing.mangle_run checks it after each step).
planted_programs(folder) is deterministic for a given folder."""
from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Planted:
    kind: str           # where the payload sits
    source: bytes
    canary: str         # the file the payload would create


_BASE = '''{header}import tilelang.language as T
{top}
N = {n}


{decorator}@T.prim_func
def main(x: T.Tensor(({shape},), T.float32), out: T.Tensor((1,), T.float32){extra}):
    with T.Kernel({grid}, threads={threads}) as bx:
        x_frag = T.alloc_fragment((N,), T.float32)
        T.copy(x, x_frag)
        acc = T.alloc_reducer((1,), T.float32, op="sum")
        T.reducer_init(acc)
{kernel}        for j in T.Parallel({extent}):
            T.reducer_update(acc[0], {value})
        res = T.alloc_fragment((1,), T.float32)
        T.finalize_reducer(acc, res)
        T.copy(res, out)
'''

_DEFAULTS = dict(header="", top="", n="8", decorator="", shape="N", extra="", grid="1",
                 threads="128", kernel="", extent="N", value="x_frag[j]")


def _program(**parts: str) -> str:
    return _BASE.format(**{**_DEFAULTS, **parts})


def _utf7_hidden(touch: str) -> bytes:
    """A comment line whose UTF-7 reading holds a newline (+AAo-) and then a statement:
    Python runs `touch` at import, a UTF-8 reader sees only a comment."""
    text = _program(header="# -*- coding: utf-7 -*-\n",
                    top=f"# harmless note +AAo-{touch}\n")
    return text.encode("utf-8")


def payloads(canary: str) -> dict[str, bytes]:
    """Every planted program for one canary path, by kind."""
    c = repr(canary)
    touch = f"open({c}, 'w').close()"
    expr = f"(open({c}, 'w').close() or 8)"          # 8 when it runs, a call either way
    helper = f"def helper(i):\n    open({c}, 'w').close()\n    return i\n"
    p = {
        "statement": _program(top=f"{touch}\n"),
        "import_os": _program(top=f"import os\nos.close(os.open({c}, os.O_CREAT | os.O_WRONLY))\n"),
        "dunder_import": _program(top=f"__import__('pathlib').Path({c}).touch()\n"),
        "exec": _program(top=f"exec({touch!r})\n"),
        "eval": _program(top=f"N2 = eval({expr!r})\n"),
        "compile": _program(top=f"exec(compile({touch!r}, 'x', 'exec'))\n"),
        "decorator": _program(top=f"def evil(f):\n    {touch}\n    return f\n",
                              decorator="@evil\n"),
        "decorator_expression": _program(decorator=f"@(open({c}, 'w').close() or T.prim_func)\n"),
        "default_argument": _program(extra=f", z=open({c}, 'w').close()"),
        "annotation": _program(extra=f", z: open({c}, 'w').close() = None"),
        "shape_call": _program(shape=expr),
        "constant_call": _program(n=expr),
        "class_body": _program(top=f"class K:\n    {touch}\n"),
        "fstring": _program(top=f"NAME = f\"{{open({c}, 'w').close()}}\"\n"),
        "walrus": _program(n=f"((z := open({c}, 'w')) and z.close() or 8)"),
        "lambda": _program(top=f"F = (lambda: {touch})()\n"),
        "comprehension": _program(n=f"([open({c}, 'w').close() for _ in range(1)] and 8)"),
        "getattr_builtins": _program(top=f"getattr(__builtins__, 'open')({c}, 'w').close()\n"),
        "getattr_module": _program(top=f"getattr(__import__('os'), 'system')('touch ' + {c})\n"),
        "builtins_dict": _program(top=f"import builtins\nbuiltins.__dict__['open']({c}, 'w')"
                                      f".close()\n"),
        "module_getattr": _program(top=f"def __getattr__(name):\n    {touch}\n    return 8\n"),
        "with_statement": _program(top=f"with open({c}, 'w'):\n    pass\n"),
        "try_finally": _program(top=f"try:\n    pass\nfinally:\n    {touch}\n"),
        "assert": _program(top=f"assert {touch} is None\n"),
        "helper_in_kernel": _program(top=helper, value="x_frag[helper(j)]"),
        "helper_in_extent": _program(top=helper, extent="helper(N)"),
        "grid_call": _program(grid=expr),
        "threads_call": _program(threads=f"(open({c}, 'w').close() or 128)"),
        "kernel_statement": _program(kernel=f"        {touch}\n"),
        "macro": _program(top=f"@T.macro\ndef m():\n    {touch}\n",
                          kernel="        m()\n"),
        "monkeypatch": _program(top=f"T.reducer_update = lambda *a: {touch}\n"),
        "main_guard": _program(top=f"if __name__ != '__main__':\n    {touch}\n"),
        "input_line": _program(header=f"# input: x=__import__('os').system('touch ' + {c})\n"),
    }
    programs = {kind: text.encode("utf-8") for kind, text in p.items()}
    programs["utf7_cookie"] = _utf7_hidden(touch)
    return programs


def planted_programs(folder: str) -> list[Planted]:
    """One program per kind, each with its own canary under `folder` (which the
    payloads name by its absolute path)."""
    folder = os.path.abspath(folder)
    out = []
    for kind in payloads("").keys():
        canary = os.path.join(folder, f"canary_{kind}")
        out.append(Planted(kind, payloads(canary)[kind], canary))
    return out
