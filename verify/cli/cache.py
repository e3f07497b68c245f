"""The on-disk cache of `check`'s answers: checking an unchanged program again with the
same flags reads its answer back instead of redoing every proof and run.

What is kept is one program's answer as the command produced it (verify.cli.judged):
its exit code, what it wrote on stdout and stderr in order, and its JSON document. It
is played back byte for byte, then says it came from here (a `cached` line, a `cached`
detail after -q's verdict, `"cached": true` in the document).

The key is a sha256 over everything the answer depends on (program_key):
- the tool: its version, a hash of its own source files (a code change is a new tool),
  Python's version and the installed files of the libraries that compute verdicts;
- the program: the path as given (the report names it) and the source bytes (stdin's
  text);
- the flags: --func, --seed, --blocks, --arch, --param, --for-all, --assume, --inputs (an .npz
  by its bytes), the memory limit (--max-memory, or the machine facts its default is
  made of), the codes [tool.verify-reducer] accepts for this program;
- the output's form: --json, --values, -q, and whether each stream is coloured.
An entry also holds its key and the tool's fingerprint, checked on every read: an entry
that does not parse or does not match is removed with a warning and the program is
checked again — an entry is never trusted across versions or half-written.

Where: $VERIFY_REDUCER_CACHE_DIR, else the platform's user cache folder (platformdirs,
when installed), else ~/.cache/verify-reducer; entries under answers/, one JSON file
each, written atomically (verify.cli.outputs). Bounded: past MAX_BYTES the least
recently used entries go (a read refreshes an entry's time). Only verdicts are kept
(exit 0, 1, 3, 5): a usage error or a crash is never an answer to replay, nor an
answer where a proof came back unknown (Z3's time or the plan search's budget ran out:
on a less loaded machine the same check may decide it).

Not used (the command runs as if there were no cache): `check --no-cache`, `cache =
false` in [tool.verify-reducer], $VERIFY_REDUCER_NO_CACHE set (the test suite sets it:
a test that plants a fault must see it run), -v (its timings and notes belong to one
run), --html (the report's sections are made by the run). Only the standard library
and light modules of ours are imported here: a check whose answers are all cached
(answer) never loads numpy, Z3 or the verifier."""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from verify_reducer import __version__
from verify_reducer.verify.cli.judged import Judged
from verify_reducer.verify.cli.programs import Program, expand_programs

MAX_BYTES = 64 * 2**20          # the whole cache; an answer over MAX_BYTES // 16 is not kept
ENTRY_FORMAT = 1                # the layout of an entry file (a change makes old ones unread)
VERDICT_CODES = (0, 1, 3, 5)    # verified, rejected, mismatch, inconclusive
# the libraries whose versions can change a verdict (proofs, arithmetic, float8 rounding)
LIBRARIES = ("z3", "numpy", "ml_dtypes", "networkx")
SUBPACKAGES = ("spec", "interp", "codegen", "verify")
SOURCE_SUFFIXES = (".py", ".cuh", ".j2", ".json")


def for_command(args) -> "Store | None":
    """The cache this command line reads and keeps answers in, or None where it is not
    used (see the module's list)."""
    if getattr(args, "command", None) != "check" or getattr(args, "no_cache", False) \
            or getattr(args, "verbose", False) or getattr(args, "html", None) \
            or os.environ.get("VERIFY_REDUCER_NO_CACHE", "") != "":
        return None
    config = getattr(args, "config", None)
    if config is not None and not config.cache:
        return None
    return Store(cache_dir() / "answers")


def cache_dir() -> Path:
    """$VERIFY_REDUCER_CACHE_DIR, else the platform's user cache folder, else
    ~/.cache/verify-reducer."""
    given = os.environ.get("VERIFY_REDUCER_CACHE_DIR", "")
    if given:
        return Path(given)
    try:
        import platformdirs
    except ImportError:
        return Path.home() / ".cache" / "verify-reducer"
    return Path(platformdirs.user_cache_dir("verify-reducer", appauthor=False))


def answer(args) -> int | None:
    """The command's exit code when every program it names has its answer in the cache,
    all of them played (verify.cli.finish); None when the command must run: the cache
    is off, a program is on stdin (reading it here would take it from the run), or one
    answer is missing."""
    store = for_command(args)
    if store is None or "-" in args.programs:
        return None
    found = []
    for program in expand_programs(args.programs):
        key = program_key(args, program)
        judged = store.get(key) if key is not None else None
        if judged is None:
            return None
        found.append((program, judged))
    from verify_reducer.verify.cli.finish import finish
    return finish(args, found)


# ----------------------------------------------------------------------------- the key

def program_key(args, program: Program) -> str | None:
    """The key of one program's answer under this command line; None when it has none
    (a program that cannot be read is reported by the run, never answered from here)."""
    if program.problem is not None:
        return None
    if program.source is not None:
        source = program.source.encode("utf-8")
    else:
        try:
            with open(program.label, "rb") as f:
                source = f.read()
        except OSError:
            return None
    out = args.ui
    config = getattr(args, "config", None)
    facts = {
        "tool": tool_fingerprint(),
        "command": args.command,
        "program": program.label,
        "source": hashlib.sha256(source).hexdigest(),
        "func": args.func, "seed": args.seed, "blocks": args.blocks,
        "arch": getattr(args, "arch", None),
        "param": list(args.param), "for_all": list(args.for_all),
        "assume": list(args.assume),
        "inputs": [args.inputs, _file_digest(args.inputs)],
        "memory": _memory_facts(args),
        "accepted": config.ignored_for(program.label) if config is not None else {},
        "output": {"json": bool(out.json), "values": bool(getattr(args, "values", False)),
                   "quiet": bool(out.quiet), "color_out": bool(out.color_out),
                   "color_err": bool(out.color_err)},
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


_FINGERPRINT: list[str] = []    # computed once per process


def tool_fingerprint() -> str:
    """The tool as it is installed here: its version, the sha256 of its own source files
    (every .py, CUDA header, template and schema of the package), Python's version and
    the installed LIBRARIES."""
    if not _FINGERPRINT:
        digest = hashlib.sha256()
        for name, path in _source_files():
            digest.update(name.encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
        facts = [__version__, digest.hexdigest(), sys.version, *_library_versions()]
        _FINGERPRINT.append(hashlib.sha256("\n".join(facts).encode()).hexdigest())
    return _FINGERPRINT[0]


def _source_files() -> list[tuple[str, Path]]:
    """The package's source files as (name inside the package, path), sorted by name. An
    installed copy holds every subpackage inside verify_reducer/; a checkout has them
    beside it (the package's __path__ reaches the top of the tree, see
    verify_reducer/__init__.py)."""
    import verify_reducer
    home = Path(verify_reducer.__file__).resolve().parent
    roots = {"": home}
    for name in SUBPACKAGES:
        if not (home / name).is_dir():
            roots[name] = next(Path(p) / name for p in verify_reducer.__path__
                               if (Path(p) / name).is_dir())
    found = []
    for prefix, root in roots.items():
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith((".", "__pycache__"))]
            inside = Path(prefix, os.path.relpath(folder, root))
            found += [(str(inside / f), Path(folder, f)) for f in files
                      if f.endswith(SOURCE_SUFFIXES)]
    return sorted(found)


def _library_versions() -> list[str]:
    """Each of LIBRARIES as the file its package starts from, with that file's size and
    time: an upgrade rewrites it. (Asking importlib.metadata for the versions costs more
    than a cached answer's whole budget.)"""
    from importlib.util import find_spec
    facts = []
    for name in LIBRARIES:
        spec = find_spec(name)
        origin = getattr(spec, "origin", None)
        try:
            st = os.stat(origin)
            facts.append(f"{name} {origin} {st.st_size} {st.st_mtime_ns}")
        except (OSError, TypeError):
            facts.append(f"{name} absent")
    return facts


def _file_digest(path: str | None) -> str | None:
    """The sha256 of an --inputs file (None for a keyword, or a file the run will report
    as unreadable)."""
    if not path or not os.path.isfile(path):
        return None
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(2**20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def _memory_facts(args) -> list:
    """--max-memory, or what its default is made of (verify.oracle.cost.physical_memory:
    physical memory and the address-space limit), read without loading the verifier."""
    if args.max_memory is not None:
        return ["given", args.max_memory]
    try:
        physical = [os.sysconf("SC_PAGE_SIZE"), os.sysconf("SC_PHYS_PAGES")]
    except (ValueError, OSError, AttributeError):
        physical = None
    try:
        import resource
        limit = list(resource.getrlimit(resource.RLIMIT_AS))
    except (ImportError, OSError, ValueError, AttributeError):
        limit = None
    return ["default", physical, limit]


# ----------------------------------------------------------------------------- the store

class Store:
    """The answers folder: one JSON file per key, at most limit bytes in all."""

    def __init__(self, folder: Path, limit: int = MAX_BYTES):
        self.folder, self.limit = Path(folder), limit
        self._warned = False

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> Judged | None:
        """The answer kept under key (its time refreshed: it is recently used), or None;
        an entry that cannot be read or does not match is removed, with a warning."""
        path = self.path(key)
        try:
            text = path.read_bytes().decode("utf-8")
        except (FileNotFoundError, NotADirectoryError):
            return None             # no entry (or no folder for entries)
        except (OSError, UnicodeDecodeError) as exc:
            return self._discard(path, str(exc))
        try:
            judged = _judged_of(json.loads(text), key)
        except (ValueError, TypeError, KeyError) as exc:
            return self._discard(path, str(exc) or type(exc).__name__)
        try:
            os.utime(path)
        except OSError:
            pass            # a read-only cache still answers; its order just ages
        return judged

    def put(self, key: str, judged: Judged) -> None:
        """judged kept under key when it is a decided verdict and small enough; then the
        least recently used entries go until the folder is within the limit. A cache
        that cannot be written is warned of once; the command goes on without it."""
        if judged.code not in VERDICT_CODES or judged.html_sections or not judged.decided:
            return
        text = json.dumps(_entry_of(judged, key), ensure_ascii=False, allow_nan=False)
        data = text.encode("utf-8")
        if len(data) > self.limit // 16:
            return
        from verify_reducer.verify.cli import outputs
        from verify_reducer.verify.oracle.exit_codes import UsageError
        try:
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
            outputs.write_text("the cache", str(self.path(key)), text, encoded=data)
        except (OSError, UsageError) as exc:
            self._warn(f"the cache at {self.folder} cannot be written ({exc}); this "
                       f"answer is not kept")
            return
        self.evict()

    def evict(self) -> None:
        """Remove the least recently used entries until the folder holds at most limit
        bytes."""
        entries = []
        try:
            with os.scandir(self.folder) as scan:
                for entry in scan:
                    if entry.name.endswith(".json") and entry.is_file(follow_symlinks=False):
                        st = entry.stat(follow_symlinks=False)
                        entries.append((st.st_mtime_ns, st.st_size, entry.path))
        except OSError:
            return
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.limit:
                break
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass            # another process evicted it first
            except OSError:
                continue
            total -= size

    def _discard(self, path: Path, why: str) -> None:
        """None, after removing an entry that cannot be trusted and saying so."""
        try:
            os.unlink(path)
            done = "it was removed"
        except OSError as exc:
            done = f"it could not be removed ({exc.strerror or exc})"
        self._warn(f"the cache entry {path} is unreadable ({why}); {done} and the "
                   f"program is checked again")
        return None

    def _warn(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            print(f"verify-reducer: warning: {message}", file=sys.stderr, flush=True)


def _entry_of(judged: Judged, key: str) -> dict:
    return {"format": ENTRY_FORMAT, "key": key, "tool": tool_fingerprint(),
            "code": judged.code, "detail": judged.detail,
            "chunks": [[stream, text] for stream, text in judged.chunks],
            "document": judged.documents[-1] if judged.documents else None}


def _judged_of(entry, key: str) -> Judged:
    """The answer an entry holds; ValueError when it is not a whole entry of this key,
    this tool and this format."""
    if not isinstance(entry, dict) or entry.get("format") != ENTRY_FORMAT:
        raise ValueError("not an entry of this cache format")
    if entry.get("key") != key or entry.get("tool") != tool_fingerprint():
        raise ValueError("the entry is another key's or another tool's")
    code, detail, chunks, document = (entry[k] for k in ("code", "detail", "chunks",
                                                         "document"))
    if type(code) is not int or code not in VERDICT_CODES or not isinstance(detail, str) or \
            not isinstance(chunks, list) or not all(
                isinstance(c, list) and len(c) == 2 and c[0] in (1, 2)
                and isinstance(c[1], str) for c in chunks) or \
            not (document is None or isinstance(document, dict)):
        raise ValueError("the entry's fields are malformed")
    return Judged(code, detail, [(s, t) for s, t in chunks],
                  None if document is None else [document], cached=True)
