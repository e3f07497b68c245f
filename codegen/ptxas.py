"""ptxas's own account of compiled kernels: `nvcc -Xptxas -v` run and its report parsed.

    figures = compile_figures(translation_unit)     # kernel name -> PtxasFigures
    parse_verbose(nvcc_output)                      # the same, from text

The resource model (codegen.resources) predicts shared memory exactly and registers
roughly; these are the figures it is checked against (tests, `emit --what plan
--ptxas`). ptxas prints, per entry function:

    ptxas info    : Compiling entry function 'main_kernel' for 'sm_90'
    ptxas info    : Function properties for main_kernel
        0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 102 registers, used 2 barriers, 65536 bytes smem

(no `smem` when the kernel has no static shared memory: dynamic shared memory is the
launch's, not the kernel's). A unit is compiled for the plan's target (spec.target: its
name is nvcc's -arch), and the figures say which architecture they are for."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from verify_reducer.spec.target import DEFAULT_TARGET
from .cuda import NVCC_OPTIONS, compile_arch

_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_PROPERTIES = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")


class PtxasUnavailable(RuntimeError):
    """nvcc is not on PATH."""


class PtxasFailed(RuntimeError):
    """nvcc refused the translation unit, crashed on it or did not finish in
    COMPILE_TIMEOUT_S (its output, or the time, is the message)."""


# nvcc on one translation unit: past this it is stopped and the unit counts as failed (an
# NVVM crash once took two and a half minutes to come: docs/compiler-bugs/).
COMPILE_TIMEOUT_S = 300


@dataclass(frozen=True)
class PtxasFigures:
    kernel: str
    registers: int
    shared_bytes: int                # static shared memory
    stack_bytes: int                 # local memory frame: arrays indexed at run time, spills
    spill_stores: int
    spill_loads: int
    arch: str = DEFAULT_TARGET       # the architecture ptxas compiled for

    @property
    def spills(self) -> bool:
        return bool(self.spill_stores or self.spill_loads)

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "registers": self.registers,
                "shared_bytes": self.shared_bytes, "stack_bytes": self.stack_bytes,
                "spill_stores": self.spill_stores, "spill_loads": self.spill_loads}


def parse_verbose(output: str) -> dict[str, PtxasFigures]:
    """Every entry function's figures from `-Xptxas -v` output, by kernel name."""
    fields: dict[str, dict] = {}
    current = None
    for line in output.splitlines():
        m = _ENTRY.search(line)
        if m:
            current = fields.setdefault(m.group(1), {})
            current["arch"] = m.group(2).removesuffix("a")   # sm_90a: sm_90's figures
            continue
        m = _PROPERTIES.search(line)
        if m:
            current = fields.setdefault(m.group(1), {})
            continue
        if current is None:
            continue
        m = _FRAME.search(line)
        if m:
            current.update(stack=int(m.group(1)), stores=int(m.group(2)),
                           loads=int(m.group(3)))
        m = _USED.search(line)
        if m:
            current["registers"] = int(m.group(1))
            smem = _SMEM.search(line)
            current["smem"] = int(smem.group(1)) if smem else 0
    return {name: PtxasFigures(name, f.get("registers", 0), f.get("smem", 0),
                               f.get("stack", 0), f.get("stores", 0), f.get("loads", 0),
                               f.get("arch", DEFAULT_TARGET))
            for name, f in fields.items() if "registers" in f}


def nvcc() -> str:
    found = shutil.which("nvcc")
    if found is None:
        raise PtxasUnavailable("nvcc is not on PATH (ptxas's figures need the CUDA toolkit)")
    return found


def command(unit: Path, cubin: Path, arch: str = DEFAULT_TARGET) -> list[str]:
    """The compile the figures come from: the runner's options, ptxas verbose."""
    return [nvcc(), f"-arch={arch}", "-cubin", *NVCC_OPTIONS, "-Xptxas", "-v",
            "-o", str(cubin), str(unit)]


def compile_figures(unit_text: str, arch: str = DEFAULT_TARGET) -> dict[str, PtxasFigures]:
    """Compile one translation unit for arch (a spec.target name: the plan's
    resources.target) and return every kernel's figures; PtxasFailed with nvcc's output
    when it does not compile."""
    return parse_verbose(compile_log(unit_text, arch))


def compile_log(unit_text: str, arch: str = DEFAULT_TARGET) -> str:
    """nvcc's and ptxas's verbose output for one translation unit (its figures, and the
    notes ptxas adds, such as C7519 where it had to insert a warpgroup.arrive);
    PtxasFailed with that output when it does not compile."""
    with tempfile.TemporaryDirectory(prefix="verify-reducer-ptxas-") as tmp:
        unit = Path(tmp) / "kernel.cu"
        unit.write_text(unit_text)
        returncode, output = _run(command(unit, Path(tmp) / "kernel.cubin",
                                          compile_arch(arch, unit_text)))
    if returncode != 0:
        raise PtxasFailed(output.strip())
    return output


def _run(argv: list[str]) -> tuple[int, str]:
    """Exit status and output of argv, in a process group of its own: at the time limit
    the whole group is stopped (nvcc's cicc and ptxas too, which would otherwise keep the
    pipes open), and the compile fails."""
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          start_new_session=True) as child:
        try:
            output, _ = child.communicate(timeout=COMPILE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            raise PtxasFailed(f"nvcc did not finish in {COMPILE_TIMEOUT_S} s") from None
    return child.returncode, output


def figures_text(figures: PtxasFigures) -> list[str]:
    """The figures as plan-text lines; a spill gets a line of its own."""
    lines = [f"  ptxas ({figures.arch}): {figures.registers} registers, {figures.shared_bytes} bytes "
             f"static shared memory, {figures.stack_bytes} bytes stack frame"]
    if figures.spills:
        lines.append(f"  warning: ptxas spills registers: {figures.spill_stores} bytes of "
                     f"spill stores, {figures.spill_loads} bytes of spill loads")
    return lines
