"""Differential fuzzing of the whole tool, and of TileLang, on generated TileLang reducer
kernels.

grammar (the program space, as plain descriptions) -> program (source text and update
sites) -> model (the description's own expected result, numpy) -> judge (`check --blocks
all` plus the expected result, then nvcc, the GPU or TileLang (tilelang_target): an
outcome and its signature) -> minimize (delta debugging over descriptions) -> campaign
(inline, process pool or Dask; corpus and resume; TileLang's bug reports)."""

# checks one finding's minimization may spend (the default of `fuzz --minimize-budget`;
# here, not in campaign, so that the command line's parser reads it without the fuzzer)
MINIMIZE_BUDGET = 60

# the program families a campaign draws from (`fuzz --family`): the reducer kernels of
# verify.fuzzing.grammar, or the split-K kernels of verify.fuzzing.splitk (reducers
# finalized, then atomics); here, where the command line's parser reads it too
FAMILIES = ("reducers", "splitk")
