#!/usr/bin/env bash
# Build and run cpbench's fuzz targets (docs/fuzzing.md) on the stable toolchain.
#
#   fuzz/run.sh list                              the targets
#   fuzz/run.sh build [TARGET]                    build (all targets by default)
#   fuzz/run.sh TARGET[,TARGET...]|all SECONDS [ARGS...]
#                                                 build, seed an empty corpus, fuzz each target
#                                                 for SECONDS (one after the other); ARGS go to
#                                                 libFuzzer (e.g. -use_value_profile=1)
#   fuzz/run.sh repro TARGET FILE...              run TARGET once on each FILE, with backtraces
#
# Each target runs with fuzz/corpus/TARGET as its corpus (new inputs are added there),
# fuzz/dicts/TARGET.dict when present, and writes findings to fuzz/artifacts/TARGET/
# (crash-*, oom-*, timeout-*, slow-unit-*) with the fuzzer's log in fuzz/artifacts/TARGET/logs/.
# After a finding the target is started again for the time left (at most MAX_RESTARTS times),
# so one bug does not end the run. At the end one summary line per target: executions (sum of
# libFuzzer's stat::number_of_executed_units), coverage (cov: edges, ft: features, at the end),
# corpus size, and the findings of this run, each with its panic message or abort reason.
#
# Environment (defaults in brackets):
#   CARGO_TARGET_DIR [fuzz/target]   where the instrumented build goes
#   FUZZ_TOOLCHAIN [stable]          rustup toolchain (no -Z flag is used: stable works)
#   RSS_LIMIT_MB [2048] MALLOC_LIMIT_MB [2048] TIMEOUT [10]   libFuzzer limits
#   MAX_RESTARTS [5]                 runs after findings within SECONDS
#   FUZZ_PREBUILT                    a folder of already built target binaries: no build
#                                    (machines without a Rust toolchain)
set -uo pipefail

fuzz=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$fuzz")
TARGETS="mtx bundle_json siconos_dat siconos_global fclib_hdf5 npz suite_json variants_json external_defs"

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$fuzz/target}
toolchain=${FUZZ_TOOLCHAIN:-stable}
rss=${RSS_LIMIT_MB:-2048}
malloc=${MALLOC_LIMIT_MB:-2048}
timeout=${TIMEOUT:-10}
max_restarts=${MAX_RESTARTS:-5}

# SanitizerCoverage as cargo-fuzz sets it up, without its -Zsanitizer=address: every flag here
# is a stable codegen option (-C passes, -C llvm-args) or a stable rustc flag.
FUZZ_RUSTFLAGS="-Cpasses=sancov-module \
-Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
-Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares \
-Cllvm-args=-sanitizer-coverage-stack-depth \
--cfg fuzzing \
-Cdebug-assertions \
-Coverflow-checks"

cargo_cmd() {
    if command -v rustup >/dev/null 2>&1; then
        cargo "+$toolchain" "$@"
    else
        cargo "$@"
    fi
}

host() {
    local r=rustc
    command -v rustup >/dev/null 2>&1 && r="rustup run $toolchain rustc"
    $r -vV | sed -n 's/^host: //p'
}

bin_dir() {
    if [ -n "${FUZZ_PREBUILT:-}" ]; then echo "$FUZZ_PREBUILT"; else echo "$CARGO_TARGET_DIR/$(host)/release"; fi
}

is_target() {
    local t
    for t in $TARGETS; do [ "$t" = "$1" ] && return 0; done
    return 1
}

# build all targets, or the one named; `--target` keeps RUSTFLAGS off build scripts and proc
# macros (they are not linked with libFuzzer, so they must not be instrumented)
build() {
    # binaries built elsewhere (e.g. copied to a machine without a toolchain): no build
    [ -n "${FUZZ_PREBUILT:-}" ] && return 0
    local which=(--bins)
    [ -n "${1:-}" ] && which=(--bin "$1")
    local start=$SECONDS
    echo "run.sh: building ${1:-all targets} (toolchain $toolchain, target dir $CARGO_TARGET_DIR)" >&2
    RUSTFLAGS="${RUSTFLAGS:-} $FUZZ_RUSTFLAGS" cargo_cmd build --release \
        --manifest-path "$fuzz/Cargo.toml" --target "$(host)" "${which[@]}" || {
        echo "run.sh: build failed" >&2
        exit 1
    }
    echo "run.sh: built in $((SECONDS - start)) s" >&2
}

# the reason of the finding a libFuzzer log ends with (one line)
reason() {
    local log=$1 r
    r=$(grep -m1 -A1 ' panicked at ' "$log" | tr '\n' ' ' | sed 's/^thread .* panicked at //; s/ *$//')
    if [ -z "$r" ]; then
        r=$(grep -m1 -E 'ERROR: libFuzzer: (out-of-memory|timeout)|memory allocation of .* failed|has overflowed its stack|ERROR: libFuzzer: deadly signal' "$log" |
            sed 's/^==[0-9]*== *//')
    fi
    # the first frame in cpbench's own crates, when a backtrace was printed
    local at
    at=$(grep -m1 -E '^ +at .*/(problems|harness|solvers|granular)/src/' "$log" | sed -E 's/^ *at //; s#^.*/((problems|harness|solvers|granular)/src/)#\1#')
    [ -n "$at" ] && r="$r [first cpbench frame: $at]"
    echo "${r:-unknown (see the log)}"
}

# fuzz target $1 for $2 seconds; prints its summary line
run_target() {
    local t=$1 secs=$2
    shift 2
    local bin corpus art logs dict=()
    bin="$(bin_dir)/$t"
    corpus="$fuzz/corpus/$t"
    art="$fuzz/artifacts/$t"
    logs="$art/logs"
    mkdir -p "$corpus" "$logs"
    [ -n "$(ls -A "$corpus" 2>/dev/null)" ] || "$fuzz/seed.sh" "$t" >&2
    [ -f "$fuzz/dicts/$t.dict" ] && dict=(-dict="$fuzz/dicts/$t.dict")
    local scratch
    scratch=$(mktemp -d -p "${FUZZ_TMP:-$( [ -w /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")}" cpbench-fuzz-XXXXXX)
    local before
    before=$(ls "$art" | grep -E '^(crash|oom|timeout|slow-unit|leak)-' | sort)
    local start=$SECONDS left=$secs runs=0 execs=0 cov="?" ft="?" stamp
    stamp=$(date +%Y%m%d-%H%M%S)
    local runlogs=()
    while [ "$left" -gt 0 ] && [ "$runs" -le "$max_restarts" ]; do
        local log="$logs/$stamp-$runs.log"
        runlogs+=("$log")
        # RUST_BACKTRACE=1 for the panic hook's backtrace; RUST_LIB_BACKTRACE=0 so that error
        # values capturing backtraces do not slow every run down
        (cd "$art" && TMPDIR="$scratch" RUST_BACKTRACE=1 RUST_LIB_BACKTRACE=0 "$bin" "$corpus" \
            -max_total_time="$left" -rss_limit_mb="$rss" -malloc_limit_mb="$malloc" \
            -timeout="$timeout" -artifact_prefix="$art/" -print_final_stats=1 "${dict[@]}" "$@") \
            >"$log" 2>&1
        local rc=$?
        local e
        e=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
        execs=$((execs + ${e:-0}))
        local line
        line=$(grep -E '^#[0-9]+.*cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
        if [ -n "$line" ]; then
            cov=$(sed -E 's/.*cov: ([0-9]+).*/\1/' <<<"$line")
            ft=$(sed -E 's/.*ft: ([0-9]+).*/\1/' <<<"$line")
        fi
        runs=$((runs + 1))
        left=$((secs - (SECONDS - start)))
        if [ "$rc" -eq 0 ]; then
            break
        fi
        if ! grep -q 'Test unit written to' "$log"; then
            echo "run.sh: $t: libFuzzer exited with status $rc without a finding; see $log" >&2
            break
        fi
        # a corpus input that fails while the corpus is loaded would end every restart at once:
        # move it to artifacts/TARGET/quarantine/ (the finding itself is kept as crash-SHA1)
        if ! grep -q 'INITED' "$log"; then
            local a sha f moved=""
            a=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
            sha=${a##*-}
            mkdir -p "$art/quarantine"
            for f in "$corpus"/*; do
                if [ "$(sha1sum <"$f" | cut -c1-40)" = "$sha" ]; then
                    mv "$f" "$art/quarantine/" && moved="$f"
                fi
            done
            if [ -z "$moved" ]; then
                echo "run.sh: $t: an input fails while the corpus loads and was not found in it; stopping" >&2
                break
            fi
            echo "run.sh: $t: ${moved#"$root"/} fails while the corpus loads: moved to ${art#"$root"/}/quarantine/" >&2
        fi
    done
    rm -rf "$scratch"
    local after new
    after=$(ls "$art" | grep -E '^(crash|oom|timeout|slow-unit|leak)-' | sort)
    new=$(comm -13 <(echo "$before") <(echo "$after") | grep -v '^$')
    local nc no nt
    nc=$(grep -c '^crash-' <<<"$new")
    no=$(grep -c '^oom-' <<<"$new")
    nt=$(grep -c '^timeout-' <<<"$new")
    printf '%-15s execs %10d  cov %6s  ft %7s  corpus %5d  crash %d  oom %d  timeout %d  (%d s, %d run%s)\n' \
        "$t" "$execs" "$cov" "$ft" "$(ls "$corpus" | wc -l)" "$nc" "$no" "$nt" "$((SECONDS - start))" \
        "$runs" "$([ "$runs" -gt 1 ] && echo s)"
    local log a seen=" "
    for log in "${runlogs[@]}"; do
        a=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        [ -n "$a" ] || continue
        case $seen in *" $a "*) continue ;; esac # the same input found again
        seen="$seen$a "
        printf '    %s: %s\n' "${a#"$root"/}" "$(reason "$log")"
    done
}

repro() {
    local t=$1
    shift
    local f
    for f in "$@"; do
        echo "=== $t $f"
        local scratch
        scratch=$(mktemp -d)
        TMPDIR="$scratch" RUST_BACKTRACE=1 RUST_LIB_BACKTRACE=0 "$(bin_dir)/$t" \
            -rss_limit_mb="$rss" -malloc_limit_mb="$malloc" -timeout="$timeout" "$f" 2>&1
        echo "=== exit status $?"
        rm -rf "$scratch"
    done
}

usage() {
    sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

case "${1:-}" in
list)
    for t in $TARGETS; do echo "$t"; done
    ;;
build)
    [ -n "${2:-}" ] && ! is_target "$2" && usage
    build "${2:-}"
    ;;
repro)
    [ $# -ge 3 ] && is_target "$2" || usage
    t=$2
    shift 2
    [ -x "$(bin_dir)/$t" ] || build "$t"
    repro "$t" "$@"
    ;;
"" | -h | --help)
    usage
    ;;
*)
    what=$1
    secs=${2:-}
    [[ "$secs" =~ ^[0-9]+$ ]] || usage
    shift 2
    if [ "$what" = all ]; then
        targets=$TARGETS
        build
    else
        targets=${what//,/ }
        for t in $targets; do
            is_target "$t" || {
                echo "run.sh: unknown target '$t' (fuzz/run.sh list)" >&2
                exit 2
            }
        done
        if [ "$targets" = "$what" ]; then build "$what"; else build; fi
    fi
    summary=()
    for t in $targets; do
        echo "run.sh: fuzzing $t for $secs s" >&2
        out=$(run_target "$t" "$secs" "$@")
        echo "$out" >&2
        summary+=("$out")
    done
    echo
    echo "summary (findings of this run; reproduce with: fuzz/run.sh repro TARGET FILE)"
    printf '%s\n' "${summary[@]}"
    ;;
esac
