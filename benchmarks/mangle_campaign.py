"""A long robustness campaign: many mangled programs (verify.fuzzing.mangle) through
`verify-reducer check --json`, each in its own forked child with a time limit, then the
counts of exit codes, the runs over the slow threshold, the peak RSS and every crash
class with a shrunk reproducer.

    python3 benchmarks/mangle_campaign.py --count 12000 --jobs 8
    python3 benchmarks/mangle_campaign.py --count 2000 --seed 3 --save findings/

The CI test (tests/test_robustness.py) is this with --count 2000 --seed 0 --jobs 2.
With --save DIR each class's first program and its reproducer are written there.
Exit status: 0 when no program failed, 1 otherwise."""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from verify_reducer.verify.fuzzing.mangle import mangle_corpus, seed_programs  # noqa: E402
from verify_reducer.verify.fuzzing.mangle_run import (format_summary, minimize_classes, run_programs,  # noqa: E402
                               summarize)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=12000, help="number of programs")
    parser.add_argument("--seed", type=int, default=0, help="base seed of the corpus")
    parser.add_argument("--start", type=int, default=0, help="first program number")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                        help="programs checked at once")
    parser.add_argument("--time-limit", type=float, default=60.0,
                        help="seconds before a run counts as a hang and is killed")
    parser.add_argument("--slow", type=float, default=20.0,
                        help="runs longer than this are counted (still answers)")
    parser.add_argument("--memory-mb", type=int, default=4096,
                        help="address-space cap of each child")
    parser.add_argument("--shrink-runs", type=int, default=200,
                        help="checks spent shrinking each crash class (0: no shrinking)")
    parser.add_argument("--save", help="folder for each class's program and reproducer")
    args = parser.parse_args()

    corpus = mangle_corpus(seed_programs(ROOT), args.count, args.seed, args.start)
    sources = [m.source for m in corpus]
    start, done = time.monotonic(), 0

    def progress(index, outcome):
        nonlocal done
        done += 1
        if outcome.failed:
            print(f"#{corpus[index].number}: {outcome.crash}: {outcome.detail[:120]}",
                  flush=True)
        if done % 500 == 0:
            print(f"... {done}/{len(sources)} in {time.monotonic() - start:.0f} s",
                  flush=True)

    outcomes = run_programs(sources, args.jobs, args.time_limit, args.memory_mb, progress)
    wall = time.monotonic() - start
    summary = summarize(outcomes, args.slow)
    if args.shrink_runs and summary.classes:
        minimize_classes(summary, sources, args.time_limit, args.memory_mb,
                         args.shrink_runs)
    print(f"seed {args.seed}, programs {args.start}..{args.start + args.count - 1}, "
          f"{args.jobs} jobs, {wall:.0f} s wall")
    print(format_summary(summary, args.slow))
    for cls in summary.classes.values():
        m = corpus[cls.first]
        print(f"  {cls.name}: first is #{m.number}, from {m.seed_name} by "
              f"{'; '.join(m.edits)}")
    if args.save:
        _save(Path(args.save), summary, corpus)
    return 1 if summary.classes else 0


def _save(folder: Path, summary, corpus) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for cls in summary.classes.values():
        stem = re.sub(r"[^A-Za-z0-9]+", "_", cls.name).strip("_")[:80]
        (folder / f"{stem}.program.py").write_bytes(corpus[cls.first].source)
        if cls.reproducer:
            (folder / f"{stem}.min.py").write_bytes(cls.reproducer)
    print(f"saved {len(summary.classes)} class(es) in {folder}/")


if __name__ == "__main__":
    sys.exit(main())
