"""Every file the command line writes goes through here: `run --output`, `check --html`,
`emit --out`, `run --svg`, `--json-file`, the folders of findings and bug reports. One
rule for all of them:

- Checked before any work (check_file, check_folder): a destination that cannot be
  written is a usage error (exit 2) before the first program is parsed. Its folder must
  exist and take a new file — probed by creating and removing a temporary file there, since
  root passes every permission test and a read-only file system or /proc fails none of
  them — and the destination must not be a directory, a device or a pipe, a symbolic
  link (a link is never written through: name the file itself), or one of the run's
  own input files (the program, an `--inputs`/`--outputs` .npz; run_inputs).
- Written atomically (write_text, write_npz): a temporary file in the same folder,
  flushed, then os.replace — a reader never sees half a report, a write that fails
  leaves the old file as it was, and a link put in the destination's place after the
  check is replaced, not followed. Each write checks its destination again (the files a
  folder destination gets are checked only here)."""
from __future__ import annotations

import os
import stat
import tempfile
from typing import BinaryIO, Callable, Iterable

from verify_reducer.verify.oracle.exit_codes import UsageError


def check_file(flag: str, path: str, protected: Iterable[str] = (),
               given: str | None = None) -> str:
    """path, if it may be written (see the module's rule); UsageError naming flag and
    given (what the user typed, when path adds to it: `run --output res` writes
    res.npz)."""
    said = f"{flag} {path if given is None else given}"
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise UsageError(f"{said}: no such directory {folder}")
    if os.path.islink(path):
        raise UsageError(f"{said}: {path} is a symbolic link (to {os.readlink(path)}); "
                         f"verify-reducer does not write through links: give the path "
                         f"of the file itself")
    if os.path.isdir(path):
        raise UsageError(f"{said}: {path} is a directory")
    if os.path.exists(path):
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise UsageError(f"{said}: {path} is not a regular file (a device, a pipe or "
                             f"a socket); give a file path")
        if _identity(path) in {_identity(p) for p in protected if os.path.exists(p)}:
            raise UsageError(f"{said}: {path} is an input of this run (the program or an "
                             f".npz it reads); verify-reducer never writes over its inputs")
    _check_name_length(said, path, folder)
    _probe(said, folder)
    return path


def check_folder(flag: str, path: str) -> None:
    """A folder files will be written into (findings, bug reports, one picture per
    file): made when missing; UsageError when it cannot be made or written."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"{flag} {path}: exists and is not a directory")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot create the directory ({exc.strerror})") \
            from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {path}: cannot write in the directory")
    _probe(f"{flag} {path}", path)


def run_inputs(args) -> tuple[str, ...]:
    """The files a command reads, which no output may replace: its programs (every .py
    under a directory given), --inputs and compare's --outputs when they are files."""
    found: list[str] = []
    for program in getattr(args, "programs", None) or ():
        if program != "-" and os.path.isdir(program):
            found += [os.path.join(root, f) for root, _, files in os.walk(program)
                      for f in files if f.endswith(".py")]
        elif program != "-":
            found.append(program)
    for flag in ("inputs", "outputs"):
        value = getattr(args, flag, None)
        if isinstance(value, str) and os.path.isfile(value):
            found.append(value)
    return tuple(found)


def npz_name(path: str) -> str:
    """The file an .npz destination names (numpy's rule: .npz appended when missing)."""
    return path if path.endswith(".npz") else path + ".npz"


def write_text(flag: str, path: str, text: str, protected: Iterable[str] = (),
               encoded: bytes | None = None) -> None:
    """text (UTF-8; or encoded, its bytes as given) written atomically to path."""
    data = text.encode("utf-8") if encoded is None else encoded
    _replace(flag, path, lambda f: f.write(data), protected)


def write_npz(flag: str, path: str, arrays: dict,
              protected: Iterable[str] = ()) -> str:
    """arrays (name -> numpy array) written atomically as an .npz; returns the file
    written (npz_name)."""
    import numpy as np      # here: the cache writes its entries through this module
    written = npz_name(path)
    _replace(flag, written, lambda f: np.savez(f, **arrays), protected, given=path)
    return written


# ----------------------------------------------------------------------------- inside

def _replace(flag: str, path: str, fill: Callable[[BinaryIO], object],
             protected: Iterable[str], given: str | None = None) -> None:
    check_file(flag, path, protected, given)
    said = f"{flag} {path if given is None else given}"
    folder = os.path.dirname(path) or "."
    mode = _mode(path)
    try:
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=".verify-reducer-",
                                         suffix=".tmp")
    except OSError as exc:
        raise UsageError(f"{said}: cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            fill(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError as exc:
        _remove(temporary)
        raise UsageError(f"{said}: cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        _remove(temporary)
        raise


def _probe(said: str, folder: str) -> None:
    """A new file can be made in folder (what the atomic write will need)."""
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".verify-reducer-", suffix=".tmp")
    except OSError as exc:
        raise UsageError(f"{said}: cannot write in {folder} ({exc.strerror or exc})") \
            from None
    os.close(fd)
    _remove(probe)


def _check_name_length(said: str, path: str, folder: str) -> None:
    try:
        longest = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        longest = None
    if longest and len(os.fsencode(os.path.basename(path))) > longest:
        raise UsageError(f"{said}: the file name is longer than {longest} bytes")


def _mode(path: str) -> int:
    """A replaced file keeps its permissions; a new one gets the umask's."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _identity(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
