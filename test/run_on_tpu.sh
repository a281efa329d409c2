#!/usr/bin/env bash
# Runs the test suite on a TPU (docs/tpu.md), in chunks that each fit one 10-minute command
# of a lent machine: one process per chunk, since one program at a time holds the chip.
#   test/run_on_tpu.sh K N [pytest args]   # chunk K (0-based) of N
# A file's chunk is fixed by its name (a checksum of the path, modulo N), so adding a test
# file moves no other file to another chunk. Each chunk writes its junit reports to
# ${OUT:-/tmp}/tpu-chunk-K.*.xml and its log to tpu-chunk-K.log, and prints pytest's
# summary. A test that kills the process (XLA's TPU compiler aborts on some programs
# instead of raising), or one after which the chip's core halted (conftest then ends the
# process: every later program would fail), is reported as CRASHED; the chunk then goes
# on from that test's file, without it, in a new process. MJAX_TEST_TPU=1 puts mjax (and jax, where a test uses it as the
# oracle) on the chip; tests that need several devices skip with a reason.
set -uo pipefail
cd "$(dirname "$0")/.."
k=${1:?chunk index}; n=${2:?number of chunks}; shift 2
mapfile -t files < <(find test -name 'test_*.py' -not -path 'test/tf/*' | sort |
    while read -r f; do
        [ $(( $(printf %s "$f" | cksum | cut -d' ' -f1) % n )) -eq "$k" ] && echo "$f"
    done)
export MJAX_TEST_TPU=1 PYTHONUNBUFFERED=1
out=${OUT:-/tmp}; log="$out/tpu-chunk-$k.log"; : > "$log"
deselect=(); attempt=0
while [ ${#files[@]} -gt 0 ]; do
    attempt=$((attempt + 1))
    python3 -m pytest -v -p no:cacheprovider -p no:xdist -o addopts="" -rfE \
        --continue-on-collection-errors --junitxml="$out/tpu-chunk-$k.$attempt.xml" \
        "${deselect[@]}" "${files[@]}" "$@" >> "$log" 2>&1
    rc=$?
    if [ $rc -ne 134 ] && [ $rc -ne 139 ]; then
        break
    fi
    # The test that was running: pytest -v names a test before its outcome.
    crashed=$(grep -oE '^test/[^ ]+::[^ ]+' "$log" | tail -1)
    echo "CRASHED $crashed (exit $rc)" >> "$log"
    [ -n "$crashed" ] || break
    deselect+=(--deselect "$crashed")
    file=${crashed%%::*}
    for i in "${!files[@]}"; do
        if [ "${files[$i]}" = "$file" ]; then files=("${files[@]:$i}"); break; fi
    done
done
grep -E '^(FAILED|ERROR|CRASHED)|^=+ .* in [0-9.]+s' "$log"
