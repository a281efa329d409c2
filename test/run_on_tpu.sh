#!/usr/bin/env bash
# Runs the test suite on a TPU (docs/tpu.md), in chunks that each fit one 10-minute command
# of a lent machine: one process per chunk, since one program at a time holds the chip.
#   test/run_on_tpu.sh K N [pytest args]   # chunk K (0-based) of N; the files are dealt
#                                          # round-robin by sorted name
# Each chunk writes its junit report to ${OUT:-/tmp}/tpu-chunk-K.xml and prints pytest's
# summary. MJAX_TEST_TPU=1 puts mjax (and jax, where a test uses it as the oracle) on the
# chip; tests that need eight devices use the host's CPU devices or skip with a reason.
set -uo pipefail
cd "$(dirname "$0")/.."
k=${1:?chunk index}; n=${2:?number of chunks}; shift 2
files=$(find test -name 'test_*.py' -not -path 'test/tf/*' | sort | awk -v k="$k" -v n="$n" 'NR % n == k')
export MJAX_TEST_TPU=1 PYTHONUNBUFFERED=1
python3 -m pytest -q -p no:cacheprovider -p no:xdist -o addopts="" \
    --junitxml="${OUT:-/tmp}/tpu-chunk-$k.xml" $files "$@"
