#!/usr/bin/env bash
# Runs docs/scale.md's SLURM job array for real: a one-node SLURM cluster started in a temporary
# directory (its own munged, slurmctld and slurmd on this machine), the `default` suite in K = 3
# shards as a job array (one `cpbench run --shard i/K` per array task), a `cpbench merge` job
# that waits on the array (`--dependency=afterok`), then the merged summary.csv compared with
# one plain, unsharded run of the same suite (times and host-dependent values left out).
#
# Usage: bash scripts/slurm/test.sh [CPBENCH [SINGLE_RUN_DIR]]
#   CPBENCH         the cpbench binary (default target/debug/cpbench)
#   SINGLE_RUN_DIR  optional: an existing folder of `cpbench run --suite default --jobs 1
#                   --no-plots` made by the same binary, used as the unsharded run instead of
#                   running the suite once more (.ci/run passes the folder it has just made)
# Environment: CPBENCH_SLURM_KEEP=1 keeps the temporary directory (daemon and job logs).
#
# Needs root (slurmd runs as root, SlurmUser=root). SLURM and MUNGE (Debian's slurm-wlm and
# munge) are installed with apt-get when missing. Exit status: 0 passed, 1 failed, 77 skipped
# (SLURM cannot be installed or run here: not root, no apt-get, the install failed, the daemons
# do not come up; their logs are shown); a job that fails or a merge that differs is a failure
# (1). The reason of a skip is the last line printed, "slurm test: skipped: <why>". Nothing
# outside the temporary directory is configured or started: the system's munge key, socket and
# slurm.conf (if any) are left alone, and the daemons listen on their own ports.
set -euo pipefail
export LC_ALL=C
export PATH="$PATH:/usr/sbin:/sbin"

K=3                                              # shards = array tasks
RUN_FLAGS=(--suite default --jobs 1 --no-plots)  # docs/scale.md's flags, default suite, no plots
CTLD_PORT=16817 SLURMD_PORT=16818                # not SLURM's 6817/6818: no clash with a real one
START_TIMEOUT=60                                 # s until the node must be idle
JOBS_TIMEOUT=1800                                # s until the array and the merge must be done

cpbench=$(realpath "${1:-target/debug/cpbench}")
single_ref=${2:+$(realpath "$2")}
[ -x "$cpbench" ] || { echo "slurm test: no cpbench binary at $cpbench" >&2; exit 1; }

skip() { echo "slurm test: skipped: $*"; exit 77; }
fail() { echo "slurm test: FAILED: $*" >&2; exit 1; }

# phase timing: `lap NAME` prints the seconds since the previous lap
t_start=$EPOCHREALTIME t_lap=$EPOCHREALTIME
lap() {
    local now=$EPOCHREALTIME
    awk -v a="$t_lap" -v b="$now" -v n="$1" 'BEGIN { printf "slurm test: %-28s %7.1f s\n", n, b - a }'
    t_lap=$now
}

# --- 1. install -------------------------------------------------------------------------------
[ "$(id -u)" = 0 ] || skip "needs root (slurmd runs as root with SlurmUser=root)"
have_all() {
    local c
    for c in munged slurmctld slurmd sbatch squeue sinfo scancel; do
        command -v "$c" > /dev/null || return 1
    done
}
if ! have_all; then
    command -v apt-get > /dev/null || skip "SLURM is not installed and there is no apt-get"
    echo "slurm test: installing slurm-wlm and munge with apt-get"
    apt_log=$(mktemp)
    if ! (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends slurm-wlm munge) > "$apt_log" 2>&1; then
        tail -n 20 "$apt_log"
        rm -f "$apt_log"
        skip "apt-get install slurm-wlm munge failed (output above)"
    fi
    rm -f "$apt_log"
    have_all || skip "slurm-wlm and munge installed, but a command is still missing"
fi
echo "slurm test: $(slurmctld -V), $(munged --version 2>&1 | awk "{ print \$1; exit }")"
lap "install (or check)"

# --- 2. a one-node cluster in a temporary directory -------------------------------------------
tmp=$(mktemp -d /tmp/cpbench-slurm.XXXXXX)
chmod 755 "$tmp"
mkdir -p "$tmp"/{log,state,spool,work,rc,munge}  # munge/: 755, munged wants its socket reachable
pids=()     # the daemons this script started, stopped on exit
job_ids=()  # the jobs it submitted, cancelled on exit (no-op when done)
cleanup() {
    local rc=$?
    set +e
    [ ${#job_ids[@]} -gt 0 ] && scancel "${job_ids[@]}" 2> /dev/null
    for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
    for p in "${pids[@]}"; do wait "$p" 2> /dev/null; done
    if [ -f "$tmp/munge/munged.pid" ]; then kill "$(cat "$tmp/munge/munged.pid")" 2> /dev/null; fi
    if [ "${CPBENCH_SLURM_KEEP:-0}" = 1 ]; then
        echo "slurm test: kept $tmp"
    else
        rm -rf "$tmp"
    fi
    exit "$rc"
}
trap cleanup EXIT
show_logs() {  # the daemons' and jobs' logs, for a failure
    local f
    for f in "$tmp"/log/*; do
        [ -s "$f" ] || continue
        echo "----- $f (last 30 lines)"
        tail -n 30 "$f"
    done >&2
}

# MUNGE: its own daemon, key and socket (the system's munge, if any, is not touched)
if command -v mungekey > /dev/null; then
    mungekey --create --keyfile="$tmp/munge/munge.key"
else
    dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
fi
chmod 400 "$tmp/munge/munge.key"
munged --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/munge.socket" \
    --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" \
    --log-file="$tmp/log/munged.log" \
    || { show_logs; skip "munged did not start here (its log above)"; }

host=$(hostname -s)
cpus=$(nproc)
mem_mb=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)  # a bit under the machine's
export SLURM_CONF="$tmp/slurm.conf"  # for slurmctld, slurmd and every client command
cat > "$SLURM_CONF" << EOF
# one node, one partition, no accounting, no cgroups: written by scripts/slurm/test.sh
ClusterName=cpbench-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

# foreground daemons (-D) in the background: their ids are this script's to stop
slurmctld -D -i -f "$SLURM_CONF" > "$tmp/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" > "$tmp/log/slurmd.out" 2>&1 &
pids+=($!)
deadline=$((SECONDS + START_TIMEOUT))
until [ "$(sinfo -h -N -o %T 2> /dev/null)" = idle ]; do
    if [ $SECONDS -ge $deadline ]; then
        show_logs
        skip "the SLURM node is not idle after ${START_TIMEOUT}s (sinfo: $(sinfo -h -N -o %T 2>&1)): SLURM cannot run here (logs above)"
    fi
    for p in "${pids[@]}"; do
        kill -0 "$p" 2> /dev/null || { show_logs; skip "a SLURM daemon exited at start: SLURM cannot run here (logs above)"; }
    done
    sleep 0.5
done
echo "slurm test: node $host idle ($cpus CPUs, RealMemory=$mem_mb MB)"
lap "start daemons"

# --- 3. the job array and the merge, as docs/scale.md shows them ------------------------------
# shards are 1-based (`--shard i/n` needs 1 <= i <= n): --array=1-K, as in docs/scale.md
work=$tmp/work
# each job writes "exit-status start end" (epoch seconds) to rc/: no accounting to ask instead
cat > "$work/shard.sh" << EOF
#!/bin/bash
#SBATCH --array=1-$K
#SBATCH --cpus-per-task=1
t0=\$EPOCHREALTIME
"$cpbench" run ${RUN_FLAGS[*]} \\
    --shard \${SLURM_ARRAY_TASK_ID}/\${SLURM_ARRAY_TASK_COUNT} --out shards/\${SLURM_ARRAY_TASK_ID}
rc=\$?
echo \$rc \$t0 \$EPOCHREALTIME > "$tmp/rc/shard-\${SLURM_ARRAY_TASK_ID}"
exit \$rc
EOF
cat > "$work/merge.sh" << EOF
#!/bin/bash
t0=\$EPOCHREALTIME
"$cpbench" merge --no-plots --out merged shards/*
rc=\$?
echo \$rc \$t0 \$EPOCHREALTIME > "$tmp/rc/merge"
exit \$rc
EOF
t_submit=$EPOCHREALTIME
array_id=$(sbatch --parsable --chdir="$work" --output="$tmp/log/shard-%a.log" "$work/shard.sh")
job_ids+=("$array_id")
# --kill-on-invalid-dep: a failed shard cancels the merge instead of leaving it pending forever
merge_id=$(sbatch --parsable --chdir="$work" --output="$tmp/log/merge.log" \
    --dependency=afterok:"$array_id" --kill-on-invalid-dep=yes "$work/merge.sh")
job_ids+=("$merge_id")
echo "slurm test: submitted array job $array_id (tasks 1-$K) and merge job $merge_id"
# no accounting (no sacct): wait until the merge job leaves the queue, then read the exit
# codes the jobs wrote
deadline=$((SECONDS + JOBS_TIMEOUT))
while [ -n "$(squeue -h -j "$merge_id" -o %i 2> /dev/null || true)" ]; do
    if [ $SECONDS -ge $deadline ]; then
        squeue
        show_logs
        fail "the jobs are not done after ${JOBS_TIMEOUT}s"
    fi
    sleep 1
done
# `job NAME`: its exit status, or a failure; prints when it ran (seconds after the submission)
job() {
    local rc=none t0 t1
    [ -f "$tmp/rc/$1" ] && { read -r rc t0 t1 < "$tmp/rc/$1" || true; }
    [ "$rc" = 0 ] || { show_logs; fail "job $1 exited with status $rc (none: did not run)"; }
    awk -v s="$t_submit" -v a="$t0" -v b="$t1" -v n="$1" \
        'BEGIN { printf "slurm test:   %-8s ran %5.1f s, from %5.1f s to %5.1f s\n", n, b - a, a - s, b - s }'
}
for i in $(seq 1 $K); do job "shard-$i"; done
job merge
lap "array ($K shards) + merge"

# --- 4. the same suite unsharded --------------------------------------------------------------
if [ -n "$single_ref" ]; then
    single=$single_ref
    echo "slurm test: unsharded run: $single (given)"
else
    single=$tmp/single
    "$cpbench" run "${RUN_FLAGS[@]}" --out "$single" > "$tmp/log/single.log" 2>&1 \
        || { show_logs; fail "the unsharded run failed"; }
fi
lap "unsharded run"

# --- 5. compare: the merged rows == the unsharded run's rows ----------------------------------
python3 - "$tmp/rows" "$single/summary.csv" "$work/merged/summary.csv" \
    "$work"/shards/*/summary.csv << 'EOF'
import csv, re, sys

rows_path, single_path, merged_path, shard_paths = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]

def read(path):
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        return r.fieldnames, list(r)

header, single = read(single_path)
mheader, merged = read(merged_path)
if header != mheader:
    sys.exit(f"slurm test: FAILED: the headers differ:\n  single {header}\n  merged {mheader}")
# left out: timings (every column with `time` in its name: time_s, time_min_s, time_max_s) and
# the host-dependent peak memory (peak_rss_bytes); inside `counters`, the timed entries
# (`*time*`, e.g. solve_time_s, factor_time_s) and rates per second (`*rate*`: flop_rate)
dropped = [c for c in header if "time" in c or c == "peak_rss_bytes"]
kept = [c for c in header if c not in dropped]
timed = re.compile(r"time|rate")

def canon(row):
    out = dict(row)
    out["counters"] = ";".join(kv for kv in row["counters"].split(";")
                               if not timed.search(kv.split("=", 1)[0]))
    return tuple(out[c] for c in kept)

key = lambda t: tuple(t[kept.index(c)] for c in ("instance_hash", "solver", "profile", "settings_hash"))
a = sorted(map(canon, single), key=key)
b = sorted(map(canon, merged), key=key)
shard_rows = sum(len(read(p)[1]) for p in shard_paths)
print(f"slurm test: compared {len(kept)} columns, left out {', '.join(dropped)} and the timed counters")
problems = []
if len(a) != len(b):
    problems.append(f"the merged folder has {len(b)} rows, the unsharded run {len(a)}")
if shard_rows != len(b):
    problems.append(f"the shards hold {shard_rows} rows, the merged folder {len(b)}")
if a != b:
    # a run (instance, solver, profile, settings) in both: its differing columns; else the run
    ka, kb = {key(t): t for t in a}, {key(t): t for t in b}
    name = lambda t: " / ".join(t[kept.index(c)] for c in ("instance", "solver", "profile", "settings_hash"))
    for k in sorted(ka.keys() | kb.keys()):
        ta, tb = ka.get(k), kb.get(k)
        if ta is None:
            print(f"  only in the merged folder: {name(tb)}")
        elif tb is None:
            print(f"  only in the unsharded run: {name(ta)}")
        elif ta != tb:
            print(f"  {name(ta)}:")
            for c, x, y in zip(kept, ta, tb):
                if x != y:
                    print(f"    {c}: unsharded {x!r}, merged {y!r}")
    problems.append("the rows differ (above)")
if a == b and [key(canon(r)) for r in single] != [key(canon(r)) for r in merged]:
    # docs/scale.md: `cpbench merge` writes the rows in the canonical order of an unsharded run
    problems.append("the same rows, but the merged file is not in the unsharded run's order")
if problems:
    sys.exit("slurm test: FAILED: " + "; ".join(problems))
print(f"slurm test: {len(b)} rows ({len(shard_paths)} shards of {', '.join(str(len(read(p)[1])) for p in shard_paths)})")
open(rows_path, "w").write(str(len(b)))
EOF
rows=$(cat "$tmp/rows")
lap "compare"
awk -v a="$t_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "slurm test: %-28s %7.1f s\n", "total", b - a }'
echo "slurm test: passed (merged $rows rows == single run)"
