"""Issue 24: an .npz is read member by member, bounded by the program's own parameters.
Nine members of zeros (4.7 MB on disk) took 3.65 GB before their names were checked;
now the zip's directory and each member's .npy header decide, before any data is read:
a file larger than the parameters' arrays, a member that is not NAME.npy of a
parameter, a name stored twice, a header whose shape or dtype does not fit."""
from __future__ import annotations

import functools
import io
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from verify_reducer.verify.cli.commands import main

ROOT = Path(__file__).resolve().parent.parent
MINIMAL = str(ROOT / "examples" / "minimal_legacy.py")            # x: (8,) float32
GEMV = str(ROOT / "examples" / "gemv_pipelined.py")              # A: (M, K) float16

# what the child prints: its exit code, its peak RSS (KiB) and the seconds main() took
MEASURE = """
import json, sys, time
from verify_reducer.verify.cli.commands import main
start = time.perf_counter()
code = main(sys.argv[1:])
seconds = time.perf_counter() - start
# VmHWM is this process image's own peak: ru_maxrss would carry over the peak of the
# (large) pytest process this child was forked from
peak = next(int(line.split()[1]) for line in open("/proc/self/status")
            if line.startswith("VmHWM:"))
print(json.dumps({"code": code, "seconds": seconds, "rss_kib": peak}))
"""


@functools.lru_cache(maxsize=None)
def _zeros_member(elements: int, level: int) -> tuple[bytes, int, int]:
    """(the raw deflate stream, the CRC-32 and the size) of an .npy of float64 zeros."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (elements,)})
    squeeze = zlib.compressobj(level, zlib.DEFLATED, -15)
    crc, chunk = zlib.crc32(header.getvalue()), bytes(1 << 20)
    stream = [squeeze.compress(header.getvalue())]
    left = elements * 8
    while left:
        part = chunk[:min(left, len(chunk))]
        crc = zlib.crc32(part, crc)
        stream.append(squeeze.compress(part))
        left -= len(part)
    stream.append(squeeze.flush())
    return b"".join(stream), crc, len(header.getvalue()) + elements * 8


def zeros_bomb(path: Path, names: list[str], elements: int, level: int = 9) -> Path:
    """An .npz of len(names) float64 members of `elements` zeros each, written by hand:
    the one deflate stream of the zeros is compressed once and stored under every name
    (zipfile would compress each member again)."""
    data, crc, size = _zeros_member(elements, level)
    out, directory = bytearray(), bytearray()
    for name in names:
        raw = f"{name}.npy".encode()
        fields = (20, 0, 8, 0, 0, crc, len(data), size, len(raw))
        directory += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, *fields, 0, 0, 0,
                                 0, 0, len(out)) + raw
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, *fields, 0) + raw + data
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(names), len(names),
                      len(directory), len(out), 0)
    path.write_bytes(bytes(out + directory + end))
    return path


def measured(*argv: str) -> dict:
    child = subprocess.run([sys.executable, "-c", MEASURE, *argv], capture_output=True,
                           text=True, timeout=120)
    return json.loads(child.stdout.strip().splitlines()[-1]) | {"stderr": child.stderr}


def test_the_bomb_is_a_zip_numpy_reads(tmp_path):
    """The hand-written archive is a real .npz (so the refusals below are not about a
    broken file)."""
    bomb = zeros_bomb(tmp_path / "small.npz", ["a", "b"], 1000)
    with np.load(bomb) as data:
        assert sorted(data.files) == ["a", "b"] and not data["b"].any()


@pytest.mark.parametrize("program, names, says", [
    (MINIMAL, [f"m{i}" for i in range(9)], "more than arrays for the kernel"),
    (GEMV, [f"m{i}" for i in range(9)], "no parameter named m0"),
    (GEMV, ["A"] * 9, "A is stored twice"),
    (GEMV, ["x"], "input x has shape (8388608,), the program declares"),
], ids=["issue-24-bomb", "unknown-names", "one-name-nine-times", "header-too-large"])
def test_a_zip_bomb_is_refused_in_under_a_second_and_200_mb(tmp_path, program, names,
                                                            says):
    """Each member decompresses to 64 MiB: read eagerly, nine of them need 576 MB (the
    issue's bomb had 400 MB members; the check is the same, before any data)."""
    bomb = zeros_bomb(tmp_path / "bomb.npz", names, 2**23)
    got = measured("run", program, "--inputs", str(bomb))
    assert got["code"] == 2 and says in got["stderr"], got
    assert got["rss_kib"] < 200 * 1024, got          # importing numpy and z3 is ~100 MB
    assert got["seconds"] < 1.0, got


@pytest.mark.parametrize("members, says", [
    ({"x": b"hello"}, "member 'x' is not an .npy array"),
    ({"x.npy/": b""}, "is not an .npy array"),
])
def test_members_not_named_npy_are_refused(tmp_path, capsys, members, says):
    """`.npz` members not named *.npy ended in a KeyError (exit 4)."""
    import zipfile
    path = tmp_path / "odd.npz"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    code = main(["run", MINIMAL, "--inputs", str(path), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 2 and says in doc["error"], doc


def test_an_object_header_is_refused_before_its_data(tmp_path, capsys):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "|O", "fortran_order": False, "shape": (8,)})
    import zipfile
    path = tmp_path / "objects.npz"
    with zipfile.ZipFile(path, "w") as archive:     # a header and no pickle at all
        archive.writestr("x.npy", header.getvalue())
    code = main(["run", MINIMAL, "--inputs", str(path), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 2 and "Python objects" in doc["error"] and "allow_pickle" in doc["error"]


def test_well_formed_inputs_still_read(tmp_path, capsys):
    path = tmp_path / "in.npz"
    np.savez_compressed(path, x=np.arange(1, 9, dtype=np.float64))    # flat, float64
    code = main(["run", MINIMAL, "--inputs", str(path), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["outputs"]["out"]["values"] == [36.0]
