#!/usr/bin/env bash
# Runs a cluster config as real local processes: every ps and worker of its
# host lists, each with its own log under LOGDIR; waits for all of them and
# exits non-zero if any node failed.
#   examples/run-cluster.sh CONFIG [extra downpour options...]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${DOWNPOUR:-$here/build/downpour}
config=${1:?usage: run-cluster.sh CONFIG [options...]}
shift
[ -x "$bin" ] || { echo "run-cluster: $bin not built (run make build)" >&2; exit 2; }
[ -f "$config" ] || { echo "run-cluster: config '$config' not found" >&2; exit 2; }
value() { sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*//p" "$config" | tail -1; }
count() { local v; v=$(value "$1"); [ -n "$v" ] && echo "$v" | tr ',' '\n' | grep -c . || echo 2; }
nps=$(count ps-hosts)
nworkers=$(count worker-hosts)
logdir=${LOGDIR:-logs/run-cluster}
mkdir -p "$logdir"
pids=()
names=()
trap 'kill "${pids[@]}" 2>/dev/null || true' INT TERM
for ((k = 0; k < nps; k++)); do
  "$bin" --config "$config" --role=ps --task=$k --quiet "$@" >"$logdir/ps$k.log" 2>&1 &
  pids+=($!); names+=("ps $k")
done
for ((w = nworkers - 1; w >= 0; w--)); do
  extra=(--quiet)
  [ $w -eq 0 ] && extra=()
  "$bin" --config "$config" --role=worker --task=$w "${extra[@]}" "$@" >"$logdir/worker$w.log" 2>&1 &
  pids+=($!); names+=("worker $w")
done
echo "run-cluster: $nps ps and $nworkers workers started; logs in $logdir"
failed=0
for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then
    echo "run-cluster: ${names[$i]} exited 0"
  else
    rc=$?
    echo "run-cluster: ${names[$i]} failed with exit code $rc (see $logdir)" >&2
    failed=1
  fi
done
grep -h ' INFO final: ' "$logdir/worker0.log" || true
exit $failed
