#!/usr/bin/env bash
# Runs the cargo-fuzz targets of fuzz/ one after the other (docs/fuzzing.md):
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     # default: 3600 s each, every target
#
# Installs cargo-fuzz (and a nightly toolchain) if missing. One fuzzer at a time, one
# process each: the machine is shared. Each target's corpus grows in fuzz/corpus/<target>
# (not committed), starting from the committed seeds in fuzz/seeds/<target>; a crash stops
# libFuzzer, is kept in fuzz/artifacts/<target>/, and the run goes on for the rest of its
# time. Each run appends one line to the table at the end of docs/fuzzing.md: date, target,
# seconds, executions, corpus size, crashes, commit (numbers from libFuzzer's final stats).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

secs=${1:-3600}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(packet sql pages redo)
fi

if ! rustup toolchain list | grep -q '^nightly'; then
    rustup toolchain install nightly --profile minimal
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

cd "$root/fuzz"
cargo +nightly fuzz build -O

commit=$(git rev-parse --short HEAD)
if ! git diff --quiet HEAD -- "$root/crates" "$root/fuzz"; then
    commit="$commit+changes"
fi
mkdir -p logs

for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "seeds/$t" "artifacts/$t"
    started=$(date +%s)
    execs=0
    crashes=0
    log="logs/$t-$(date -u +%Y%m%dT%H%M%SZ).log"
    : > "$log"
    while :; do
        left=$((secs - ($(date +%s) - started)))
        [ "$left" -gt 0 ] || break
        # Runs in this process, at most `left` seconds; -timeout: one input for 30 s is a
        # hang; the fuzz/ directory is the working directory (anything written lands there).
        dict=()
        if [ -f "dicts/$t.dict" ]; then
            dict=(-dict="dicts/$t.dict")
        fi
        set +e
        # The shared database lives until the process ends: no leak check at exit.
        ASAN_OPTIONS=detect_leaks=0 cargo +nightly fuzz run -O "$t" "corpus/$t" "seeds/$t" -- \
            -max_total_time="$left" -timeout=30 -rss_limit_mb=4096 -detect_leaks=0 \
            "${dict[@]}" -print_final_stats=1 >>"$log" 2>&1
        rc=$?
        set -e
        n=$(grep -a 'stat::number_of_executed_units:' "$log" | tail -1 | awk '{print $2}')
        execs=$((execs + ${n:-0}))
        # Count each stop once: the stats line stays in the log for the next round.
        echo "--- round ended (exit $rc) ---" >>"$log"
        sed -i 's/stat::number_of_executed_units:/counted_executed_units:/' "$log"
        if [ "$rc" -eq 0 ]; then
            break
        fi
        crashes=$((crashes + 1))
        if ! grep -aq 'Test unit written to\|SUMMARY: libFuzzer\|deadly signal\|panicked' "$log"; then
            # Not a finding (the build or the harness failed): stop here.
            echo "fuzz.sh: $t stopped (exit $rc) without a crash report; see fuzz/$log" >&2
            crashes=$((crashes - 1))
            break
        fi
    done
    elapsed=$(($(date +%s) - started))
    corpus=$(find "corpus/$t" -type f | wc -l)
    line="| $(date -u +%Y-%m-%d) | $t | $elapsed | $execs | $corpus | $crashes | $commit |"
    echo "$line" >>"$root/docs/fuzzing.md"
    echo "$line"
done
