#!/bin/bash
# TileLang against the oracle, on the GPU machine, in one call from the project root:
#   bash tests/gpu_tilelang_probe.sh
# (carry .gpu/ holding setup-device.sh, site-cp312.tar.xz, tilelang-0.1.15-site-cp312.tar.xz
# and tldeps-site-cp312.tar.xz — README "On the GPU machine" says how to make the last).
# Prints what TileLang returns for the RFC's example.
source .gpu/setup-device.sh
set +e                       # setup-device.sh sets -e: run both steps whatever the first says
python3 -m pytest -m gpu tests/test_tilelang_backend.py -q -rs
tests=$?
python3 -m verify_reducer run examples/minimal_legacy.py --backend tilelang
echo "pytest exit $tests; run exit $? (0 TileLang == interpreter, 3 mismatch, 2 unavailable)"
# every example again under TileLang's forced-baseline plan; each disagreement becomes a
# bug report folder under ${OUT:-.}/tilelang-reports (program, inputs, expected, got)
for prog in examples/*.py; do
  python3 -m verify_reducer run "$prog" --backend tilelang \
    --tilelang-config tl.reducer_force_baseline=true --bug-report "${OUT:-.}/tilelang-reports"
  echo "$prog forced baseline: exit $?"
done
