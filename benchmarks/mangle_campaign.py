"""A long robustness campaign: mangled programs (verify.fuzzing.mangle), deep programs
(verify.fuzzing.deep), planted-code programs (verify.fuzzing.planted) and semantic
probes (verify.fuzzing.probes) through the `verify-reducer` commands, each run in its own
forked child with a time limit and an address-space cap; then the exit codes per
command, the runs over the slow threshold, the memory kills, the peak RSS, every crash
class with a shrunk reproducer, and every probe answered wrongly.

    python3 benchmarks/mangle_campaign.py --count 12000 --jobs 8 --deep --planted --probes
    python3 benchmarks/mangle_campaign.py --count 600 --jobs 1 --commands check,sim --save out/

Commands (--commands, default all five; verify.fuzzing.mangle_run.COMMANDS): check
(`check --json`), sim (`run --no-verify --backend sim`), cuda (`emit --what cuda
--no-verify`), compare (the simulator's outputs on witness inputs through `compare`),
witness (`check --inputs witness`). With --assign round-robin (the default) mangled
program k runs through command k mod len(commands); with --assign every, through each.
Deep and planted programs always run through every command. Probes run their own steps
(interp, check, sim or compare on their own inputs).

The CI test (tests/test_robustness.py) is --count 2000 --seed 0 --jobs 2 --commands check.
With --save DIR each class's first program, its reproducer and its command are written
there, and each silently-wrong probe with its inputs.
Exit status: 0 when nothing failed and no probe was silently wrong, 1 otherwise."""
from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from verify_reducer.verify.fuzzing.deep import deep_programs  # noqa: E402
from verify_reducer.verify.fuzzing.mangle import mangle_corpus, seed_programs  # noqa: E402
from verify_reducer.verify.fuzzing.mangle_run import (COMMANDS, Job, format_summary,  # noqa: E402
                                                      minimize_classes, run_jobs, summarize)
from verify_reducer.verify.fuzzing.planted import planted_programs  # noqa: E402
from verify_reducer.verify.fuzzing.probes import all_probes, format_verdicts, judge  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=12000, help="number of mangled programs")
    parser.add_argument("--seed", type=int, default=0, help="base seed of the corpus")
    parser.add_argument("--start", type=int, default=0, help="first program number")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                        help="runs at once")
    parser.add_argument("--commands", default=",".join(COMMANDS),
                        help=f"comma-separated, of {', '.join(COMMANDS)} (default: all)")
    parser.add_argument("--assign", choices=("round-robin", "every"), default="round-robin",
                        help="mangled program k through command k mod n, or through every one")
    parser.add_argument("--deep", action="store_true", help="also the deep programs")
    parser.add_argument("--planted", action="store_true", help="also the planted-code programs")
    parser.add_argument("--probes", action="store_true", help="also the semantic probes")
    parser.add_argument("--only", metavar="REGEX",
                        help="of the deep, planted and probe programs, only those whose name "
                             "matches (e.g. 'serial|grid', 'cast_')")
    parser.add_argument("--time-limit", type=float, default=60.0,
                        help="seconds before a run counts as a hang and is killed")
    parser.add_argument("--slow", type=float, default=20.0,
                        help="runs longer than this are counted (still answers)")
    parser.add_argument("--memory-mb", type=int, default=4096,
                        help="address-space cap of each child")
    parser.add_argument("--shrink-runs", type=int, default=200,
                        help="runs spent shrinking each crash class (0: no shrinking)")
    parser.add_argument("--save", help="folder for each class's program and reproducer")
    args = parser.parse_args()
    commands = [c.strip() for c in args.commands.split(",") if c.strip()]
    unknown = [c for c in commands if c not in COMMANDS]
    if unknown or not commands:
        parser.error(f"--commands: unknown {', '.join(unknown) or '(none given)'}; "
                     f"choose from {', '.join(COMMANDS)}")

    canaries = tempfile.mkdtemp(prefix="campaign-canaries-")
    jobs, names = _jobs(args, commands, canaries)
    probes = [p for p in (all_probes() if args.probes else []) if _chosen(args, p.name)]
    first_probe = len(jobs)
    jobs += [p.job() for p in probes]
    names += [f"probe {p.name}" for p in probes]
    start, done = time.monotonic(), 0

    def progress(index, outcome):
        nonlocal done
        done += 1
        if outcome.failed:
            print(f"{names[index]} [{outcome.command}]: {outcome.crash}: "
                  f"{outcome.detail[:120]}", flush=True)
        elif outcome.seconds > args.slow:
            print(f"{names[index]} [{outcome.command}]: {outcome.seconds:.1f} s, "
                  f"{outcome.cpu_seconds:.1f} s CPU (exit {outcome.exit_code})", flush=True)
        if done % 500 == 0:
            print(f"... {done}/{len(jobs)} in {time.monotonic() - start:.0f} s", flush=True)

    outcomes = run_jobs(jobs, args.jobs, args.time_limit, args.memory_mb, progress)
    wall = time.monotonic() - start
    summary = summarize(outcomes, args.slow)
    if args.shrink_runs and summary.classes:
        minimize_classes(summary, jobs, args.time_limit, args.memory_mb, args.shrink_runs)
    print(f"seed {args.seed}, mangled programs {args.start}..{args.start + args.count - 1} "
          f"({args.assign} over {', '.join(commands)}), deep {args.deep}, planted "
          f"{args.planted}, probes {len(probes)}; {len(jobs)} runs, {args.jobs} at once, "
          f"{wall:.0f} s wall")
    print(format_summary(summary, args.slow))
    for cls in summary.classes.values():
        print(f"  {cls.name}: first is {names[cls.first]}")
    for i in summary.slow_runs:
        print(f"  over {args.slow:g} s: {names[i]} [{outcomes[i].command}] "
              f"{outcomes[i].seconds:.1f} s ({outcomes[i].cpu_seconds:.1f} s CPU), "
              f"exit {outcomes[i].exit_code}")
    verdicts = [judge(p, o) for p, o in zip(probes, outcomes[first_probe:])]
    if probes:
        print(format_verdicts(verdicts))
    if args.save:
        _save(Path(args.save), summary, jobs, names, probes, verdicts)
    wrong = sum(v.status == "silently wrong" for v in verdicts)
    return 1 if summary.classes or wrong or summary.slow else 0


def _jobs(args, commands: list[str], canaries: str) -> tuple[list[Job], list[str]]:
    """The campaign's jobs and a name for each (where it came from)."""
    jobs, names = [], []
    corpus = mangle_corpus(seed_programs(ROOT), args.count, args.seed, args.start)
    for m in corpus:
        chosen = commands if args.assign == "every" else \
            [commands[m.number % len(commands)]]
        for command in chosen:
            jobs.append(Job(m.source, command))
            names.append(f"#{m.number} (from {m.seed_name} by {'; '.join(m.edits)})"[:300])
    extra = []
    if args.deep:
        extra += [(f"deep {d.name}", d.source, None) for d in deep_programs()]
    if args.planted:
        extra += [(f"planted {p.kind}", p.source, p.canary) for p in planted_programs(canaries)]
    for name, source, canary in extra:
        if not _chosen(args, name.split(" ", 1)[1]):
            continue
        for command in commands:
            jobs.append(Job(source, command, canary=canary))
            names.append(name)
    return jobs, names


def _chosen(args, name: str) -> bool:
    return args.only is None or re.search(args.only, name) is not None


def _save(folder: Path, summary, jobs, names, probes, verdicts) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for cls in summary.classes.values():
        stem = re.sub(r"[^A-Za-z0-9]+", "_", cls.name).strip("_")[:80]
        job = jobs[cls.first]
        (folder / f"{stem}.program.py").write_bytes(job.source)
        if cls.reproducer:
            (folder / f"{stem}.min.py").write_bytes(cls.reproducer)
        steps = "\n".join("verify-reducer " + " ".join(a.format(prog="PROG.py", dir=".")
                                                       for a in argv) for argv in job.argvs())
        (folder / f"{stem}.command.txt").write_text(
            f"{names[cls.first]}\n{cls.count} run(s): {cls.detail}\n{steps}\n")
    wrong = [(p, v) for p, v in zip(probes, verdicts) if v.status != "ok"]
    for probe, verdict in wrong:
        stem = f"probe_{probe.name}"
        (folder / f"{stem}.py").write_text(probe.source)
        for name, data in probe.job().files:
            (folder / f"{stem}.{name}").write_bytes(data)
        truth = ", ".join(repr(t) for t in probe.truth)
        (folder / f"{stem}.txt").write_text(
            f"{verdict.status} (rule {probe.rule})\ntruth out = [{truth}]\n"
            f"verify-reducer run {stem}.py --backend interp --inputs {stem}.in.npz --json\n"
            f"verify-reducer check {stem}.py --inputs {stem}.in.npz --json\n"
            + "\n".join(verdict.notes) + "\n")
    print(f"saved {len(summary.classes)} class(es) and {len(wrong)} probe(s) in {folder}/")


if __name__ == "__main__":
    sys.exit(main())
