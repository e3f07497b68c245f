"""Differential fuzzing of the whole tool, and of TileLang, on generated TileLang reducer
kernels.

grammar (the program space, as plain descriptions) -> program (source text and update
sites) -> model (the description's own expected result, numpy) -> judge (`check --blocks
all` plus the expected result, then nvcc, the GPU or TileLang (tilelang_target): an
outcome and its signature) -> minimize (delta debugging over descriptions) -> campaign
(inline, process pool or Dask; corpus and resume; TileLang's bug reports)."""
