"""Lowering: layout inference, physical planning, CUDA rendering and running."""
