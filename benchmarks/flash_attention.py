"""Flash-attention forward from ONE TileLang source, compiled by TileLang and by this
project and timed side by side in one process beside torch's scaled_dot_product_attention
(issue 28; docs/performance.md, "Flash attention from one source").

The sources are TileLang's examples/flash_attention/example_mha_fwd_bshd.py and
example_mha_fwd_bhsd.py as the upstream corpus holds them (tests/upstream/mha_fwd_bshd.py,
mha_fwd_bhsd.py; each header names the upstream path and commit, printed with the
table): an `@autotune @tilelang.jit(out_idx=[3], fast math)` factory `flashattn(batch,
heads, seq_len | seq_q, seq_kv, dim, is_causal, block_M, block_N, num_stages, threads)`
whose kernel copies a Q tile to shared memory once and, per K/V tile in
`T.Pipelined`, takes S = Q K^T with `T.gemm`, the online softmax (`T.reduce_max`,
`T.exp2`, `T.reduce_sum`) and O += P V with `T.gemm` (P cast to fp16), then O / l.
Default: batch 1, 32 heads, 4096 tokens, head dim 128, fp16, causal and not, the BSHD
example (whose main() runs this shape) at its own tiling 128x128, 1 stage, 128 threads
and at the factory's defaults 64x64, 1 stage, 128 threads (`--layout bhsd`: the BHSD
example, its own tiling 128x128, 2 stages, 256 threads, from its autotune config and
run_regression_perf). Per row, on the same inputs (Q, K, V standard normal on the fp16
grid, seed 0, as the examples' torch.randn):

- `tilelang`: TileLang 0.1.15's `flashattn(...)` from the same file, the @autotune
  bypassed (it would time other tilings), compiled as the decorator says (out_idx,
  TL_ENABLE_FAST_MATH);
- `fast`, `canonical`: ours, the file with `_bound = flashattn(...)` of the same values
  appended (parse_source -> plan_func -> codegen.runner.time_cuda);
- `torch.sdpa`: torch.nn.functional.scaled_dot_product_attention on (B, H, S, D) views of
  the same tensors, the backend torch picks.

A time is the median batch average of --repeat launches after a warm-up, back to back
between two CUDA events (codegen.runner.time_launches). TFLOP/s = 4 B H S^2 D / time,
halved when causal (the examples' count). Each output is checked once against a float64
numpy reference within the bound `AttentionReference.bound` derives (docstring there):
outside it is WRONG, listed under the table, and the exit status is 1. Our kernels are
compiled with -fmad=false (codegen.runner), TileLang's with its own flags.

On the GPU machine, with .gpu/ set up as benchmarks/gemv_same_source.py says, from the
project root:

    source .gpu/setup-device.sh && python3 benchmarks/flash_attention.py --json fa.json

Without a GPU, `--dry-run` parses, plans (fast, canonical), renders and compiles (nvcc,
ptxas's figures) every configuration."""
from __future__ import annotations

import argparse
import math
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.corpus_kernel import Call, CorpusKernel, tilelang_cell  # noqa: E402
from benchmarks.same_source import (  # noqa: E402
    OURS, Cell, add_run_arguments, best_ratios, dry_run_rows, judge, measured, normal_fp16,
    open_table, ours_cells, parse_list, run, time_events, verdict)

KERNELS = {"bshd": CorpusKernel("mha_fwd_bshd", "flashattn"),
           "bhsd": CorpusKernel("mha_fwd_bhsd", "flashattn")}
# block_M, block_N, num_stages, threads: each example's own tiling first, then the
# factory's defaults (the tiling the corpus verifies)
TILINGS = {"bshd": ((128, 128, 1, 128), (64, 64, 1, 128)),
           "bhsd": ((128, 128, 2, 256), (64, 64, 1, 128))}
SHAPE = (1, 32, 4096, 128)         # batch, heads, tokens, head dim
COLUMNS = ("tilelang", *OURS, "torch.sdpa")
AGAINST = {"ours/TL": "tilelang", "ours/torch": "torch.sdpa"}
RATIOS = (*AGAINST, "canon/fast")


@dataclass(frozen=True)
class Config:
    layout: str                    # "bshd" or "bhsd": the example, and Q/K/V/Output's layout
    causal: bool
    batch: int
    heads: int
    seq: int
    dim: int
    block_m: int
    block_n: int
    stages: int
    threads: int

    group = property(lambda self: f"{self.layout} {'causal' if self.causal else 'full'}")
    tiling = property(lambda self: f"{self.block_m}x{self.block_n}s{self.stages}"
                                   f"/{self.threads}")
    label = property(lambda self: f"{self.group} {self.tiling}")
    scale_log2 = property(lambda self: (1.0 / self.dim) ** 0.5 * 1.44269504)  # the kernel's

    @property
    def flops(self) -> float:
        full = 4.0 * self.batch * self.heads * self.seq * self.seq * self.dim
        return full / 2 if self.causal else full

    @property
    def shape(self) -> tuple[int, int, int, int]:
        b, h, s, d = self.batch, self.heads, self.seq, self.dim
        return (b, s, h, d) if self.layout == "bshd" else (b, h, s, d)

    @property
    def call(self) -> Call:
        sizes = (self.seq,) if self.layout == "bshd" else (self.seq, self.seq)
        return Call((self.batch, self.heads, *sizes, self.dim, self.causal),
                    (("block_M", self.block_m), ("block_N", self.block_n),
                     ("num_stages", self.stages), ("threads", self.threads)))

    def check(self) -> str | None:
        if self.seq % self.block_m or self.seq % self.block_n:
            return f"{self.label}: the tokens must be a multiple of block_M and block_N"
        return None


def plan_config(cfg: Config):
    return KERNELS[cfg.layout].plan(cfg.call)


def dry_run(configs: list[Config]) -> list[dict]:
    for layout in dict.fromkeys(c.layout for c in configs):
        print(f"source ({layout}): {KERNELS[layout].upstream}")
    return dry_run_rows(configs, plan_config, lambda cfg: f"{cfg.label}: "
                        f"{cfg.flops / 1e9:.1f} GFLOP, Q {cfg.shape}")


# ----------------------------------------------------------------------------- the reference

def make_inputs(cfg: Config, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    data = {n: normal_fp16(rng, cfg.shape) for n in ("Q", "K", "V")}
    data["Output"] = np.zeros(cfg.shape, np.float16)
    return data


def per_head(x, layout: str):
    """(B, H, S, D) view of a numpy array or torch tensor in layout, and back (swapaxes
    is both libraries' view of the swap, and its own inverse)."""
    return x.swapaxes(1, 2) if layout == "bshd" else x


@dataclass
class AttentionReference:
    """O = softmax_rows(S) V with S = Q K^T and the kernel's exponent 2^((s - max) c),
    in float64 (per (batch, head)); and what the bound is made of, all in the layout's
    shape: weighted = sum_j p_j |v_j| / l and plain = sum_j |v_j| / l over the keys a row
    sees (p_j relative to the row's maximum, l = sum_j p_j >= 1), rel = a bound on the
    relative error of each p_j as the kernel computes it (row-wise)."""
    exact: np.ndarray
    weighted: np.ndarray
    plain: np.ndarray
    rel: np.ndarray
    keys: int

    @classmethod
    def of(cls, cfg: Config, data: dict) -> AttentionReference:
        q, k, v = (per_head(data[n], cfg.layout) for n in ("Q", "K", "V"))
        b, h, s, d = q.shape
        exact, weighted, plain = (np.empty((b, h, s, d)) for _ in range(3))
        rel = np.empty((b, h, s, 1))
        masked = np.triu(np.ones((s, s), bool), 1) if cfg.causal else None
        c = cfg.scale_log2
        for i in range(b):
            for j in range(h):
                q64, k64, v64 = (x[i, j].astype(np.float64) for x in (q, k, v))
                scores = q64 @ k64.T
                # the error of fp32 sums of exact fp16 products (Higham & Mary, lambda =
                # 10) over every key; sum |q k| in fp32, which errs by under 2^-10
                magnitude = np.abs(q[i, j]).astype(np.float32) @ \
                    np.abs(k[i, j]).astype(np.float32).T
                spread = 10 * math.sqrt(d) * 2.0 ** -24 * (1 + 2.0 ** -10) * \
                    magnitude.max(axis=1)
                largest = np.abs(scores).max(axis=1)      # masked keys included: larger
                if masked is not None:
                    scores[masked] = -np.inf
                top = scores.max(axis=1, keepdims=True)
                p = np.exp((scores - top) * (c * math.log(2)))      # 2^((s - top) c)
                l = p.sum(axis=1, keepdims=True)
                both = p @ np.concatenate([v64, np.abs(v64)], axis=1) / l
                exact[i, j], weighted[i, j] = both[:, :d], both[:, d:]
                seen = np.cumsum(np.abs(v64), axis=0) if masked is not None else \
                    np.broadcast_to(np.abs(v64).sum(axis=0), (s, d))
                plain[i, j] = seen / l
                rel[i, j, :, 0] = 2.0 ** -11 + 2.0 ** -21 + math.log(2) * c * (
                    spread + 2.0 ** -22 * 2 * largest)
        return cls(*(per_head(x, cfg.layout) for x in (exact, weighted, plain, rel)), s)

    def bound(self, block_n: int) -> np.ndarray:
        """Each p_j reaches P V and l with a relative error of at most rel: fp16's
        rounding of P (2^-11, P V only), exp2.approx (2^-21, generous), the exponent's
        fp32 roundings and the error of s itself (fp32 sums of exact products, Higham &
        Mary) times c ln 2; the row maximum's own error scales P V and l alike and
        cancels. Perturbed weights move O by at most rel (weighted + |O|), doubled for
        l's share and the second-order terms. To that: the fp32 sums of P V and of l
        (Higham & Mary over the keys), one fp32 rounding per K/V tile of the rescaled
        acc_o and l and the final division, fp16 subnormals of P (2^-25 absolute per
        key, in units of the running maximum: plain), O's rounding to fp16 and an
        underflow allowance."""
        o = np.abs(self.exact)
        hm = 10 * math.sqrt(self.keys) * 2.0 ** -24
        tiles = self.keys // block_n + 2
        return (2 * self.rel * (self.weighted + o) + hm * (self.weighted + o)
                + tiles * 2.0 ** -23 * (self.weighted + o) + 2.0 ** -25 * self.plain
                + 2.0 ** -11 * o + 2.0 ** -24)

    def judge_of(self, block_n: int):
        """The judge of an Output of a kernel with block_n keys per tile."""
        bound = self.bound(block_n)
        return lambda got: judge(got, self.exact, bound, "Output")


# ----------------------------------------------------------------------------- measuring

def torch_cell(cfg: Config, tensors, judged, torch, repeat: int) -> Cell:
    """SDPA on (B, H, S, D) views (a BSHD tensor transposed, not copied); its scale is
    1/sqrt(D) in natural units, the kernel's c is 1.44269504 for log2(e): 9e-10
    relative in the exponent, inside the bound's exp2 allowance."""
    sdpa = torch.nn.functional.scaled_dot_product_attention
    q, k, v = (per_head(t, cfg.layout) for t in tensors)
    out = sdpa(q, k, v, is_causal=cfg.causal)
    torch.cuda.synchronize()
    got = per_head(out.float().cpu().numpy(), cfg.layout)    # back to the layout
    error, wrong = judged(got)
    return Cell(time_events(torch, lambda: sdpa(q, k, v, is_causal=cfg.causal), repeat),
                wrong=wrong, error=error)


def targets(rows: list[dict]) -> list[dict]:
    """Issue 28: flash-attention forward >= 0.8x TileLang, at the best tiling of ours
    against TileLang's best, per layout and masking."""
    cases = []
    for group in dict.fromkeys(r["group"] for r in rows):
        members = [r for r in rows if r["group"] == group]
        ours = [r[p]["us"] for r in members for p in OURS
                if r[p]["us"] is not None and not r[p]["wrong"]]
        theirs = [r["tilelang"]["us"] for r in members
                  if r["tilelang"]["us"] is not None and not r["tilelang"]["wrong"]]
        value = min(theirs) / min(ours) if ours and theirs else None
        cases.append((group, value, not ours))
    return [verdict("ours >= 0.8x TileLang (best tiling of each)", cases, 0.8, True)]


def measure(configs: list[Config], repeat: int, json_path: str | None) -> int:
    opened = open_table(json_path, repeat, COLUMNS, RATIOS, "TFLOP/s",
                        {"sources": {k: v.upstream for k, v in KERNELS.items()}}, width=22)
    if opened is None:
        return 2
    rt, table = opened
    torch, first = rt.torch, configs[0]
    for layout in dict.fromkeys(c.layout for c in configs):
        print(f"source ({layout}): {KERNELS[layout].upstream}")
    table.header(f"flash attention fp16, batch {first.batch}, {first.heads} heads, "
                 f"{first.seq} tokens, dim {first.dim}", max(len(c.label) for c in configs) + 2)
    for group in _groups(configs):
        data = make_inputs(group[0])
        ref = AttentionReference.of(group[0], data)
        tensors = None if torch is None else \
            tuple(torch.from_numpy(data[n]).to("cuda") for n in ("Q", "K", "V"))
        for cfg in group:
            planned = plan_config(cfg)
            judged = ref.judge_of(cfg.block_n)
            cells = ours_cells(planned, data, lambda out: judged(out["Output"]), repeat)
            if tensors is None:
                cells.update({c: Cell(reason=rt.missing["torch"])
                              for c in ("tilelang", "torch.sdpa")})
            else:
                cells["tilelang"] = Cell(reason=rt.missing["tilelang"]) \
                    if "tilelang" in rt.missing else measured(lambda: tilelang_cell(
                        KERNELS[cfg.layout], cfg.call, tensors, judged, torch, repeat))
                cells["torch.sdpa"] = measured(lambda: torch_cell(cfg, tensors, judged, torch,
                                                                  repeat))
            table.row(cfg.label, cells, cfg.flops, best_ratios(cells, AGAINST),
                      {"group": cfg.group, "config": asdict(cfg),
                       "plans": {p: v.summary() for p, v in planned.items()}})
    return table.finish(targets(table.rows), "issue 28")


def _groups(configs: list[Config]) -> list[list[Config]]:
    """The configs of each (layout, masking): one set of inputs and one reference each."""
    keys = dict.fromkeys((c.layout, c.causal) for c in configs)
    return [[c for c in configs if (c.layout, c.causal) == key] for key in keys]


# ----------------------------------------------------------------------------- command line

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", default="x".join(map(str, SHAPE)),
                        help="BATCHxHEADSxTOKENSxDIM")
    parser.add_argument("--layout", choices=("bshd", "bhsd", "both"), default="bshd")
    parser.add_argument("--causal", choices=("both", "yes", "no"), default="both")
    parser.add_argument("--tilings", help="BMxBNsSTAGES/THREADS,... (default: each "
                                          "example's own and the factory's defaults)")
    add_run_arguments(parser, repeat=20)
    args = parser.parse_args(argv)
    layouts = ("bshd", "bhsd") if args.layout == "both" else (args.layout,)
    try:
        ((b, h, s, d),) = parse_list(args.shape, r"(\d+)x(\d+)x(\d+)x(\d+)",
                                     "shape BATCHxHEADSxTOKENSxDIM")
        given = parse_list(args.tilings, r"(\d+)x(\d+)s(\d+)/(\d+)",
                           "tiling BMxBNsSTAGES/THREADS") if args.tilings else None
    except (argparse.ArgumentTypeError, ValueError) as exc:
        parser.error(str(exc))
    causal = {"both": (False, True), "yes": (True,), "no": (False,)}[args.causal]
    configs = [Config(layout, c, b, h, s, d, *t) for layout in layouts for c in causal
               for t in (TILINGS[layout] if given is None else given)]
    return run(parser, args, configs, measure, dry_run)


if __name__ == "__main__":
    sys.exit(main())
