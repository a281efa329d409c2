#!/usr/bin/env bash
# Runs the test suite on a TPU (docs/tpu.md), in pieces that each fit one 10-minute command
# of a lent machine: one process at a time, since one program at a time holds the chip.
#   test/run_on_tpu.sh K N [pytest args]            # chunk K (0-based) of N
#   test/run_on_tpu.sh --list FILE [--deadline S]   # the files or test ids FILE lists, in
#                                                   # its order, for at most S seconds
#   test/run_on_tpu.sh --from PATH [--deadline S]   # every test file, in sorted order,
#                                                   # from PATH on (a pass in sessions)
# A file's chunk is fixed by its name (a checksum of the path, modulo N), so adding a test
# file moves no other file to another chunk. A list runs in its order until the deadline,
# then names the entry it stopped in (`NEXT <entry>`: the next call starts a list there),
# so that one session's calls go through a long list. Each run writes its junit reports to
# ${OUT:-/tmp}/tpu-NAME.*.xml and its log to tpu-NAME.log (NAME: chunk-K or the list's
# name), and prints pytest's summary. A test that kills the process (XLA's TPU compiler
# aborts on some programs instead of raising), or one after which the chip's core halted
# (conftest then ends the process: every later program would fail), is reported as
# CRASHED; the run then goes on from that test's file, without it, in a new process.
# MJAX_TEST_TPU=1 puts mjax (and jax, where a test uses it as the oracle) on the chip;
# tests that need several devices skip with a reason.
set -uo pipefail
cd "$(dirname "$0")/.."
deadline=0
if [ "${1:-}" = "--list" ]; then
    list=${2:?list file}; shift 2
    if [ "${1:-}" = "--deadline" ]; then deadline=${2:?seconds}; shift 2; fi
    name=$(basename "$list" .txt)
    mapfile -t files < <(grep -v '^\s*\(#\|$\)' "$list")
elif [ "${1:-}" = "--from" ]; then
    first=${2:?first test file}; shift 2
    if [ "${1:-}" = "--deadline" ]; then deadline=${2:?seconds}; shift 2; fi
    name=suite
    mapfile -t files < <(find test -name 'test_*.py' -not -path 'test/tf/*' | LC_ALL=C sort |
        LC_ALL=C awk -v f="$first" '$0 >= f')
else
    k=${1:?chunk index}; n=${2:?number of chunks}; shift 2
    name=chunk-$k
    mapfile -t files < <(find test -name 'test_*.py' -not -path 'test/tf/*' | sort |
        while read -r f; do
            [ $(( $(printf %s "$f" | cksum | cut -d' ' -f1) % n )) -eq "$k" ] && echo "$f"
        done)
fi
export MJAX_TEST_TPU=1 PYTHONUNBUFFERED=1
out=${OUT:-/tmp}; log="$out/tpu-$name.log"; : > "$log"
start=$(date +%s); deselect=(); attempt=0; limit=()
while [ ${#files[@]} -gt 0 ]; do
    if [ "$deadline" -gt 0 ]; then
        left=$((deadline - ($(date +%s) - start)))
        [ "$left" -lt 20 ] && { echo "NEXT ${files[0]}" >> "$log"; break; }
        limit=(timeout "$left")
    fi
    attempt=$((attempt + 1))
    "${limit[@]}" python3 -m pytest -v -p no:cacheprovider -p no:xdist -o addopts="" -rfE \
        --continue-on-collection-errors --junitxml="$out/tpu-$name.$attempt.xml" \
        "${deselect[@]}" "${files[@]}" "$@" >> "$log" 2>&1
    rc=$?
    # The test that was running: pytest -v names a test before its outcome.
    last=$(grep -oE '^test/[^ ]+::[^ ]+' "$log" | tail -1)
    if [ $rc -eq 124 ]; then
        echo "NEXT ${last%%::*} (the deadline, in $last)" >> "$log"; break
    fi
    if [ $rc -ne 134 ] && [ $rc -ne 139 ]; then
        break
    fi
    echo "CRASHED $last (exit $rc)" >> "$log"
    [ -n "$last" ] || break
    deselect+=(--deselect "$last")
    file=${last%%::*}
    for i in "${!files[@]}"; do
        if [ "${files[$i]%%::*}" = "$file" ]; then files=("${files[@]:$i}"); break; fi
    done
done
grep -E '^(FAILED|ERROR|CRASHED|NEXT)|^=+ .* in [0-9.]+s' "$log"
echo "passed=$(grep -c ' PASSED' "$log") failed=$(grep -c ' FAILED' "$log")" \
     "skipped=$(grep -c ' SKIPPED' "$log")"
