"""The project's settings for the command line: `[tool.verify-reducer]` in the nearest
pyproject.toml, found from the current folder upwards (as ruff and pytest find theirs).

    [tool.verify-reducer]
    ignore = ["R400"]                 # warnings and notes accepted everywhere (never errors)
    seed = 3                          # default flags of every command that has them
    blocks = "all"
    jobs = 2
    max-memory = "4G"
    color = "never"
    arch = "sm_80"                    # --arch: the GPU the kernels are planned for
    cache = false                     # never read or keep answers in the cache

    [[tool.verify-reducer.per-path]]
    paths = ["kernels/legacy/*.py"]   # globs, relative to the pyproject.toml's folder
    ignore = ["R506"]

A flag on the command line wins over the file. A key the tool does not know, a value of
the wrong type or an unknown code is a usage error naming the file and the key (exit 2):
a setting that silently did nothing would be worse than none. Accepted findings are
reported as suppressed (verify.oracle.suppressions), never dropped."""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path

from verify_reducer.verify.oracle.exit_codes import UsageError

TABLE = "verify-reducer"
# key -> (argparse destination, the flag it stands for, the type its value must have)
FLAGS = {"seed": ("seed", "--seed", int), "blocks": ("blocks", "--blocks", (int, str)),
         "jobs": ("jobs", "--jobs", int), "max-memory": ("max_memory", "--max-memory", str),
         "color": ("color", "--color", str), "arch": ("arch", "--arch", str)}
KEYS = set(FLAGS) | {"ignore", "per-path", "cache"}


@dataclass
class Config:
    path: Path | None = None                            # the pyproject.toml read
    ignore: tuple[str, ...] = ()
    flags: dict[str, object] = field(default_factory=dict)   # key -> value
    per_path: list[tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)
    cache: bool = True                                  # answers read and kept (verify.cli.cache)

    def ignored_for(self, program: str) -> dict[str, str]:
        """code -> where the configuration accepts it, for one program."""
        where = f"{self.path} [tool.{TABLE}]"
        out = {code: f"{where} ignore" for code in self.ignore}
        if self.path is None or program == "-":
            return out
        relative = os.path.relpath(os.path.abspath(program), self.path.parent)
        for n, (globs, codes) in enumerate(self.per_path):
            if any(fnmatch.fnmatch(relative, g) for g in globs):
                out.update((c, f"{where} per-path[{n}] ignore") for c in codes)
        return out


def find(start: Path | None = None) -> Path | None:
    """The nearest pyproject.toml with a [tool.verify-reducer] table, from start up."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and _table(candidate) is not None:
            return candidate
    return None


def load(path: Path | None = None) -> Config:
    path = path if path is not None else find()
    if path is None:
        return Config()
    table = _table(path)
    where = f"{path} [tool.{TABLE}]"
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(unknown)} (known: "
                         f"{', '.join(sorted(KEYS))})")
    config = Config(path, _codes(table.get("ignore", []), f"{where} ignore"))
    for key, (_, flag, kind) in FLAGS.items():
        if key in table:
            value = table[key]
            if not isinstance(value, kind) or isinstance(value, bool):
                raise UsageError(f"{where} {key}: {value!r} is not what {flag} takes")
            config.flags[key] = value
    if "cache" in table:
        if not isinstance(table["cache"], bool):
            raise UsageError(f"{where} cache: {table['cache']!r} is not true or false")
        config.cache = table["cache"]
    for n, entry in enumerate(table.get("per-path", [])):
        here = f"{where} per-path[{n}]"
        if not isinstance(entry, dict) or set(entry) - {"paths", "ignore"} or \
                "paths" not in entry:
            raise UsageError(f"{here}: a per-path table has `paths` (globs) and `ignore`")
        globs = entry["paths"]
        if not isinstance(globs, list) or not all(isinstance(g, str) for g in globs):
            raise UsageError(f"{here} paths: a list of globs")
        config.per_path.append((tuple(globs), _codes(entry.get("ignore", []),
                                                     f"{here} ignore")))
    return config


def apply_flags(args, argv: list[str], config: Config, parse_flag) -> None:
    """The configuration's flags into args where argv did not give them; parse_flag(flag,
    text) converts a value as the command line would (so the same checks apply)."""
    given = {a.split("=")[0] for a in argv if a.startswith("-")}
    for key, value in config.flags.items():
        dest, flag, _ = FLAGS[key]
        if flag in given or (flag == "--jobs" and "-j" in given) or not hasattr(args, dest):
            continue
        setattr(args, dest, parse_flag(flag, str(value), f"{config.path} [tool.{TABLE}] "
                                                          f"{key}"))


def _table(path: Path) -> dict | None:
    try:
        import tomllib
    except ImportError:                     # Python 3.10: the same parser, as a package
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: cannot be read as TOML: {exc}") from None
    table = data.get("tool", {}).get(TABLE)
    if table is not None and not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.{TABLE}] must be a table")
    return table


def _codes(value, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise UsageError(f"{where}: a list of diagnostic codes")
    if not value:
        return ()
    # the code table loads numpy: read only when codes are named (a check answered from
    # the cache reads this file before anything heavy is loaded)
    from verify_reducer.spec.diagnostics import CODES
    unknown = [c for c in value if c not in CODES]
    if unknown:
        raise UsageError(f"{where}: unknown code(s) {', '.join(unknown)} (docs/codes.md)")
    return tuple(value)
