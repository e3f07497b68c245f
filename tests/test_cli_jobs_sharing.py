"""`check --jobs N` without multiprocessing (issue 29, the --jobs ratio): programs that
look alike share a process (verify.cli.affinity), the processes take their shares from
a board (verify.cli.board) and send their answers over a pipe each (verify.cli.channel).
Every program is taken exactly once whatever the shares, a worker that dies holding the
board's lock or in the middle of a program leaves no one waiting, and an answer larger
than a pipe never blocks the worker that sends it."""
from __future__ import annotations

import fcntl
import os
import signal
import time

from test_cli_conventions import ROOT, cli

from verify_reducer.verify.cli import affinity
from verify_reducer.verify.cli.board import Board
from verify_reducer.verify.cli.channel import Inbox, Outbox

EXAMPLES = ROOT / "examples"


def _signature(name: str) -> frozenset:
    return affinity.signature((EXAMPLES / name).read_text())


# ----------------------------------------------------------------------------- affinity

def test_a_signature_reads_the_constants_values_and_no_comments():
    text = ("BD = 8\nTHREADS = 128  # 256 on sm_100\n"
            "def main(x):\n"
            "    with T.Kernel(1, threads=THREADS) as bx:\n"
            "        for j in T.Parallel(BD):  # T.Parallel(16) was slower\n"
            "            T.reducer_update(total[0], x[j], op=\"sum\")\n")
    features = affinity.signature(text)
    assert {("Parallel", "8"), ("threads", "128"), ("op", '"sum"'), ("Kernel", "1"),
            ("total", "0")} <= features
    assert not any("16" in value or "256" in value for _, value in features)
    assert affinity.signature("") == frozenset()


def test_programs_asking_the_same_questions_are_grouped_and_others_not():
    names = ["minimal_rfc.py", "gemv_family.py", "minimal_v2.py", "product.py",
             "gemv_nondividing.py", "replicated_write.py"]
    groups = affinity.groups([_signature(n) for n in names])
    assert [[names[i] for i in g] for g in groups] == [
        ["minimal_rfc.py", "minimal_v2.py", "replicated_write.py"],
        ["gemv_family.py", "gemv_nondividing.py"], ["product.py"]]


def test_groups_are_joined_through_a_program_alike_to_both():
    a, b, c = frozenset("abcde"), frozenset("abcdf"), frozenset("abcfg")
    assert affinity.groups([a, c, b]) == [[0, 1, 2]]       # a~b, b~c, a and c less alike
    assert affinity.groups([a, c]) == [[0], [1]]
    assert affinity.groups([frozenset(), frozenset()]) == [[0], [1]]   # unreadable


def test_shares_hold_every_program_once_groups_whole_and_alike_to_none_last():
    signatures = [_signature(p.name) for p in sorted(EXAMPLES.glob("*.py"))]
    for processes in (1, 2, 3, len(signatures) + 2):
        shares = affinity.shares(signatures, processes)
        assert len(shares) == processes
        assert sorted(i for share in shares for i in share) == list(range(len(signatures)))
        counts = [len(share) for share in shares]
        assert max(counts) - min(counts) <= max(len(g) for g in affinity.groups(signatures))
    groups = affinity.groups(signatures)
    assert any(len(g) > 1 for g in groups)
    alone = {g[0] for g in groups if len(g) == 1}
    for share in affinity.shares(signatures, 2):
        for group in groups:                 # whole, in one share
            assert set(group) <= set(share) or not set(group) & set(share)
        # the groups first, the programs alike to none after them
        kinds = [i in alone for i in share]
        assert kinds == sorted(kinds)


# ----------------------------------------------------------------------------- the board

def _take_all(board: Board, me: int, write_end: int) -> None:
    taken = []
    while (program := board.take(me)) is not None:
        taken.append(program)
        time.sleep(0.001)                    # let the others take between
    os.write(write_end, (",".join(map(str, taken)) + "\n").encode())
    os._exit(0)


def test_every_program_is_taken_once_by_racing_processes():
    shares = [[0, 1, 2, 3, 4, 5, 6, 7], [8, 9], [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]]
    board = Board(shares, 20)
    read_end, write_end = os.pipe()
    pids = []
    for me in (1, 2):
        pid = os.fork()
        if pid == 0:
            _take_all(board, me, write_end)
        pids.append(pid)
    mine = []
    while (program := board.take(0)) is not None:
        mine.append(program)
        time.sleep(0.001)
    for pid in pids:
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    os.close(write_end)
    with os.fdopen(read_end) as f:
        theirs = [[int(x) for x in line.strip().split(",") if x] for line in f]
    everyone = mine + [p for taken in theirs for p in taken]
    assert sorted(everyone) == list(range(20))
    assert mine[:1] == [0]                   # each starts with its own share's front
    for program in range(20):
        assert board.taker(program) in (0, 1, 2)
    assert [board.taker(p) for p in mine] == [0] * len(mine)
    board.close()


def test_a_process_out_of_programs_takes_from_the_end_of_the_fullest_share():
    board = Board([[0], [1, 2, 3], [4, 5, 6, 7, 8]], 9)
    assert board.take(0) == 0
    assert board.take(0) == 8                # share 2 has the most left: its end
    assert board.take(0) == 7
    assert board.take(0) == 3                # 3 left in both: the first of them
    assert board.take(0) == 6
    assert board.take(1) == 1                # its own share's front
    assert board.take(2) == 4
    assert [board.take(2), board.take(1), board.take(2)] == [5, 2, None]
    assert board.taker(8) == 0 and board.taker(1) == 1 and board.taker(4) == 2
    board.close()


def test_a_process_that_dies_holding_the_board_leaves_no_one_waiting():
    """The planted fault: a worker killed inside a take (its lock never released by
    itself). The system releases a dead process's record locks: the parent takes on."""
    board = Board([[0, 1], [2, 3]], 4)
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        fcntl.lockf(board._file.fileno(), fcntl.LOCK_EX)
        os.write(ready_w, b"x")
        time.sleep(60)
        os._exit(0)
    os.read(ready_r, 1)                      # the child holds the lock now
    os.kill(pid, signal.SIGKILL)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == -signal.SIGKILL
    start = time.monotonic()
    assert [board.take(0) for _ in range(5)] == [0, 1, 3, 2, None]
    assert time.monotonic() - start < 5
    os.close(ready_r)
    os.close(ready_w)
    board.close()


# ----------------------------------------------------------------------------- the channel

def test_an_answer_larger_than_a_pipe_never_blocks_its_sender():
    read_end, write_end = os.pipe()
    outbox = Outbox(write_end)
    big = "x" * (4 << 20)                    # 4 MiB: 64 pipes' worth
    start = time.monotonic()
    outbox.send((7, big))                    # the pipe takes 64 KiB, the rest waits
    outbox.send((3, "small"))
    assert time.monotonic() - start < 1
    pid = os.fork()
    if pid == 0:                             # the sender's end: wait until it is read
        os.close(read_end)
        outbox.close()
        os._exit(0)
    os.close(write_end)
    done: dict = {}
    inbox = Inbox([read_end], lambda: False)
    while len(done) < 2:
        assert inbox.receive(done, wait=True)
    assert done == {7: big, 3: "small"}
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert not inbox.receive(done, wait=True)   # its end closed: nothing more comes
    os.close(read_end)


def test_a_frame_cut_short_by_a_death_is_no_answer():
    read_end, write_end = os.pipe()
    os.write(write_end, (1000).to_bytes(8, "little") + b"\x80partial")
    os.close(write_end)
    done: dict = {}
    inbox = Inbox([read_end], lambda: True)
    assert not inbox.receive(done, wait=True) and done == {}
    os.close(read_end)


# ----------------------------------------------------------------------------- the command

PROGRAMS = [str(EXAMPLES / n) for n in (
    "gemv_family.py", "minimal_rfc.py", "product.py", "gemv_nondividing.py",
    "minimal_v2.py", "bitwise.py", "replicated_write.py")] + \
    [str(ROOT / "tests" / "programs" / "invalid" / "r201_update_after_finalize.py"),
     "no_such_file.py"]


def test_three_processes_print_what_one_prints_in_the_programs_order(capsys):
    one = cli(capsys, "check", "-q", *PROGRAMS)
    three = cli(capsys, "check", "-q", "--jobs", "3", *PROGRAMS)
    assert one == three and one[0] == 2
    labels = [line.split(": ")[0] for line in one[1].splitlines() if ".py: " in line]
    assert labels == PROGRAMS


def test_a_named_pipe_among_the_programs_is_a_usage_error_not_a_hang(capsys, tmp_path):
    """The regression: the signatures read every program before the fork, and reading
    a named pipe waits for a writer. Only regular files are read, as the check does."""
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    programs = [str(fifo), str(EXAMPLES / "minimal_rfc.py")]
    one = cli(capsys, "check", "-q", *programs)
    two = cli(capsys, "check", "-q", "--jobs", "2", *programs)
    assert one == two and one[0] == 2 and "pipe.py: no such file" in one[2]
    assert affinity.read_text(str(fifo)) == "" and affinity.read_text(str(tmp_path)) == ""


def test_a_worker_killed_mid_program_is_an_internal_error_for_it_alone(capsys, monkeypatch):
    """The planted fault: the worker that takes bitwise.py is killed (SIGKILL, as the
    out-of-memory killer does) while judging it; the other programs keep their answers."""
    from verify_reducer.verify.cli import batch
    parent, real = os.getpid(), batch.judge_captured

    def killed(pargs, command):
        if os.getpid() != parent and pargs.program.endswith("bitwise.py"):
            os.kill(os.getpid(), signal.SIGKILL)
        return real(pargs, command)
    monkeypatch.setattr(batch, "judge_captured", killed)
    # bitwise.py alike to none of the others here: it is the worker's own
    programs = [str(EXAMPLES / n) for n in ("minimal_rfc.py", "minimal_v2.py",
                                             "replicated_write.py", "bitwise.py")]
    code, out, err = cli(capsys, "check", "--jobs", "2", "-q", *programs)
    assert code == 4, (out, err)
    assert "bitwise.py ended without an answer (worker exit codes -9)" in err
    verdicts = [line for line in out.splitlines() if ".py: " in line]
    assert len(verdicts) == 4
    assert [line.endswith("verified") for line in verdicts] == [True, True, True, False]


def test_a_parent_that_leaves_early_ends_and_reaps_its_workers(monkeypatch):
    """Ctrl-C or a closed stdout ends the parent's loop early (the generator is closed):
    a worker still judging is terminated and reaped, not left running or a zombie."""
    import argparse

    from verify_reducer.verify.cli.output import Output
    from verify_reducer.verify.cli.programs import Program
    from verify_reducer.verify.cli.workers import judge_in_workers
    parent, real_fork, forked = os.getpid(), os.fork, []

    def fork() -> int:
        pid = real_fork()
        if pid:
            forked.append(pid)
        return pid
    monkeypatch.setattr(os, "fork", fork)

    def command(args) -> int:
        if os.getpid() != parent:
            time.sleep(60)                   # the worker's programs take a minute
        return 0

    def pargs_of(program):
        return argparse.Namespace(program=program.label, source=program.source,
                                  problem=None, detail="", ui=Output())
    # four programs alike to none: the parent's share is the first and the third
    programs = [Program(f"p{i}.py", "") for i in range(4)]
    start = time.monotonic()
    answers = judge_in_workers(pargs_of, command, programs, 2)
    assert next(answers).code == 0           # the parent's first program
    answers.close()
    assert time.monotonic() - start < 10
    assert len(forked) == 1
    try:
        os.waitpid(forked[0], os.WNOHANG)
    except ChildProcessError:
        pass                                 # reaped already: not running, no zombie
    else:
        raise AssertionError("the worker was left behind")


def test_past_the_grouped_limit_no_pair_is_compared(monkeypatch):
    """GROUPED_PROGRAMS bounds the quadratic comparison: past it every program is a
    group of its own, and the shares still hold every program once."""
    from verify_reducer.verify.cli import affinity
    monkeypatch.setattr(affinity, "GROUPED_PROGRAMS", 3)
    alike = [frozenset({("op", '"sum"'), ("threads", "128")})] * 4
    assert affinity.groups(alike) == [[0], [1], [2], [3]]
    assert sorted(i for share in affinity.shares(alike, 2) for i in share) == [0, 1, 2, 3]
    monkeypatch.setattr(affinity, "GROUPED_PROGRAMS", 4)
    assert affinity.groups(alike) == [[0, 1, 2, 3]]
