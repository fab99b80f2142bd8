#!/usr/bin/env bash
# Fill fuzz/corpus/<target>/ with seeds: the repository's fixtures (tests/fixtures) and the
# checked-in seeds of fuzz/seeds/. Existing corpus files are kept (libFuzzer names its own
# by content hash; seeds keep their file names, prefixed with "seed-").
#
#   fuzz/seed.sh [TARGET|all]     (default: all)
#
# Environment: MAX_SEED_BYTES (default 262144): larger fixtures are skipped. At present that
# leaves out fclib/Spheres-i099-356-679.hdf5 (493 kB: 3.5 s per run in the instrumented build,
# in the condensation) and fc2d/fc2d_granularflowonwall_02020_00213.dat (797 kB; its format is
# covered by fc2d_granularflowonwall_00667_00000.dat, 193 kB). No fixture exceeds 1 MB.
set -euo pipefail

fuzz=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$fuzz")
fx="$root/tests/fixtures"
seeds="$fuzz/seeds"
max=${MAX_SEED_BYTES:-262144}
TARGETS="mtx bundle_json siconos_dat siconos_global fclib_hdf5 npz suite_json variants_json external_defs"

# copy FILE... into the corpus of target $1 (skipping missing and too large files)
put() {
    local t=$1
    shift
    local dir="$fuzz/corpus/$t"
    mkdir -p "$dir"
    local f size
    for f in "$@"; do
        [ -f "$f" ] || continue
        size=$(wc -c <"$f")
        if [ "$size" -gt "$max" ]; then
            echo "seed.sh: $t: skipped ${f#"$root"/} ($size bytes > MAX_SEED_BYTES=$max)" >&2
            continue
        fi
        cp "$f" "$dir/seed-$(basename "$f")"
    done
}

# a bundle folder as one input: instance.json, N.mtx, r.mtx, D.mtx, M_diag.mtx joined by NUL
# bytes (trailing absent files left out; an absent file before a present one is empty)
put_bundle() {
    local dir=$1 name=$2 out="$fuzz/corpus/bundle_json/seed-bundle-$2"
    mkdir -p "$fuzz/corpus/bundle_json"
    local files=(instance.json N.mtx r.mtx D.mtx M_diag.mtx) last=0 i
    for i in 0 1 2 3 4; do
        [ -f "$dir/${files[$i]}" ] && last=$i
    done
    : >"$out"
    for i in $(seq 0 "$last"); do
        [ "$i" -gt 0 ] && printf '\0' >>"$out"
        [ -f "$dir/${files[$i]}" ] && cat "$dir/${files[$i]}" >>"$out"
    done
}

seed() {
    local t=$1
    shopt -s nullglob
    case $t in
    mtx)
        put mtx "$seeds"/mtx/*
        local f
        for f in "$fx"/bundles/*/*.mtx "$seeds"/bundle_json/*/*.mtx; do
            [ -s "$f" ] && cp "$f" "$fuzz/corpus/mtx/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
        done
        ;;
    bundle_json)
        local d
        for d in "$fx"/bundles/*/ "$seeds"/bundle_json/*/; do
            put_bundle "$d" "$(basename "$d")"
        done
        # instance.json alone (no matrix files: the header errors)
        put bundle_json "$fx"/bundles/*/instance.json
        ;;
    siconos_dat)
        put siconos_dat "$fx"/siconos-fc3d/*.dat "$fx"/lcp/*.dat "$fx"/fc2d/FC2D_*.dat \
            "$fx"/fc2d/fc2d_*.dat
        ;;
    siconos_global)
        put siconos_global "$fx"/gfc3d/*.dat "$fx"/fc2d/gfc2d_*.dat
        ;;
    fclib_hdf5)
        put fclib_hdf5 "$fx"/fclib/*.hdf5 "$fx"/synthetic/*.hdf5
        ;;
    npz)
        put npz "$fx"/generated/*.npz "$seeds"/npz/*.npz
        ;;
    suite_json)
        put suite_json "$seeds"/suite_json/*.json
        ;;
    variants_json)
        put variants_json "$seeds"/variants_json/*.json
        ;;
    external_defs)
        put external_defs "$root"/examples/external/*.json "$seeds"/external_defs/*.json
        ;;
    *)
        echo "seed.sh: unknown target '$t' (targets: $TARGETS)" >&2
        return 2
        ;;
    esac
    echo "seed.sh: $t: $(find "$fuzz/corpus/$t" -type f | wc -l) files in fuzz/corpus/$t"
}

what=${1:-all}
if [ "$what" = all ]; then
    for t in $TARGETS; do seed "$t"; done
else
    seed "$what"
fi
