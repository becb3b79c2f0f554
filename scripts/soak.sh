#!/usr/bin/env bash
# Soak test (not in CI): a long-lived braid-perf server under impaired
# traffic (loss, duplicates, reordering, corruption on both sides) from
# clients that are killed and restarted, while the server's RSS is sampled.
# Ends with a verdict: memory stayed flat when the largest RSS of the last
# quarter of the run is within --tolerance percent of the largest of the
# first quarter.
#
# usage: scripts/soak.sh [--minutes M] [--sample S] [--tolerance PCT]
#                        [--perf PATH] [--loss P] [--dup P] [--reorder P]
#                        [--corrupt P] [--seed N]
#   --minutes    run length (default 30)
#   --sample     seconds between RSS samples (default 10)
#   --tolerance  allowed growth of the last quarter's peak RSS over the
#                first quarter's, percent (default 10)
#   --perf       braid-perf binary (default build/tools/braid_perf/braid-perf)
#   impairments  applied to both sides' outbound datagrams (defaults 0.01,
#                0.01, 0.02, 0.005)
# Each client runs one test (bw 64 KiB, lat, rate) for a few seconds; half
# of them are killed (SIGKILL) part-way, and the next client then starts at
# the same address with a new incarnation: a peer restart as the server
# sees it. Clients use four addresses in turn, so the server also keeps and
# replaces several peers. Everything runs at nice 19 and blocks on its
# endpoint's fd (--block) instead of busy-polling.
# Exit: 0 flat and the server survived, 1 otherwise, 2 bad usage.
set -uo pipefail
cd "$(dirname "$0")/.."

minutes=30 sample=10 tolerance=10 perf=build/tools/braid_perf/braid-perf
loss=0.01 dup=0.01 reorder=0.02 corrupt=0.005 seed=$$
usage() { sed -n '9,17p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || usage
  case "$1" in
    --minutes) minutes=$2 ;;
    --sample) sample=$2 ;;
    --tolerance) tolerance=$2 ;;
    --perf) perf=$2 ;;
    --loss) loss=$2 ;;
    --dup) dup=$2 ;;
    --reorder) reorder=$2 ;;
    --corrupt) corrupt=$2 ;;
    --seed) seed=$2 ;;
    *) usage ;;
  esac
  shift 2
done
[ -x "$perf" ] || { echo "soak: no braid-perf at $perf (build it or give --perf)" >&2; exit 2; }

RANDOM=$seed
port=$((20000 + RANDOM % 10000))
client_ports=($((port + 1)) $((port + 2)) $((port + 3)) $((port + 4)))
impair=(--loss "$loss" --dup "$dup" --reorder "$reorder" --corrupt "$corrupt" --block)
logdir=$(mktemp -d /tmp/braid-soak.XXXXXX)
server_pid="" client_pid=""

cleanup() {
  for p in $client_pid $server_pid; do
    kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null
  done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

nice -n 19 "$perf" --server --persistent --bind "127.0.0.1:$port" --stats \
  "${impair[@]}" --seed "$seed" --time-limit 60 >"$logdir/server.out" 2>"$logdir/server.err" &
server_pid=$!
sleep 0.5
kill -0 "$server_pid" 2>/dev/null || { cat "$logdir/server.err" >&2; exit 1; }

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

tests=("--test bw -s 65536" "--test lat -s 64" "--test rate -s 64" "--test bw -s 1m --window 4")
end=$((SECONDS + minutes * 60))
next_sample=$SECONDS
samples=() ok=0 killed=0 failed=0 cport_i=0
printf 'soak: server pid %d on 127.0.0.1:%d, %s min, impairments %s, logs %s\n' \
  "$server_pid" "$port" "$minutes" "loss=$loss dup=$dup reorder=$reorder corrupt=$corrupt" "$logdir"
printf '%8s %10s %6s %6s %6s\n' "t(s)" "rss(KiB)" "ok" "killed" "failed"

# Samples the server's RSS when due; returns 1 if the server died.
maybe_sample() {
  kill -0 "$server_pid" 2>/dev/null || return 1
  if [ "$SECONDS" -ge "$next_sample" ]; then
    local r
    r=$(rss_kib "$server_pid")
    samples+=("$r")
    printf '%8d %10d %6d %6d %6d\n' "$((SECONDS - end + minutes * 60))" "$r" "$ok" "$killed" "$failed"
    next_sample=$((next_sample + sample))
  fi
  return 0
}

server_died=0
while [ "$SECONDS" -lt "$end" ]; do
  secs=$((3 + RANDOM % 6))
  cport=${client_ports[$cport_i]}
  # shellcheck disable=SC2206
  t=(${tests[$((RANDOM % ${#tests[@]}))]})
  nice -n 19 "$perf" --client "127.0.0.1:$port" --bind "127.0.0.1:$cport" "${t[@]}" \
    -D "$secs" "${impair[@]}" --seed "$RANDOM" --time-limit $((secs + 30)) \
    >>"$logdir/clients.log" 2>&1 &
  client_pid=$!
  kill_at=0
  if [ $((RANDOM % 2)) -eq 0 ]; then kill_at=$((SECONDS + 1 + RANDOM % secs)); fi
  while kill -0 "$client_pid" 2>/dev/null; do
    if [ "$kill_at" -ne 0 ] && [ "$SECONDS" -ge "$kill_at" ]; then
      kill -KILL "$client_pid" 2>/dev/null
      break
    fi
    maybe_sample || { server_died=1; break; }
    sleep 0.2
  done
  wait "$client_pid" 2>/dev/null
  rc=$?
  client_pid=""
  [ "$server_died" = 1 ] && break
  if [ "$kill_at" -ne 0 ] && [ "$rc" -eq 137 ]; then
    killed=$((killed + 1))  # the next client restarts at this address
  else
    [ "$rc" -eq 0 ] && ok=$((ok + 1)) || failed=$((failed + 1))
    cport_i=$(((cport_i + 1) % ${#client_ports[@]}))
  fi
  maybe_sample || { server_died=1; break; }
done

verdict=0
if [ "$server_died" = 1 ] || ! kill -0 "$server_pid" 2>/dev/null; then
  echo "soak: FAIL: the server died"
  tail -20 "$logdir/server.err"
  verdict=1
else
  kill -TERM "$server_pid"
  wait "$server_pid"
  echo "soak: server exit code $? (1 = some run was abandoned, expected with kills)"
  server_pid=""
  # The endpoint's counters (the first of each name; per-peer tables follow).
  grep -E '^ *(peers|peers_created|peers_evicted|peer_restarts|messages_received|stale_incarnation|duplicates) ' \
    "$logdir/server.err" | awk '!seen[$1]++' 
fi
n=${#samples[@]}
if [ "$n" -lt 4 ]; then
  echo "soak: FAIL: only $n RSS samples (run longer or sample more often)"
  exit 1
fi
q=$((n / 4))
first_max=0 last_max=0
for ((i = 0; i < q; i++)); do [ "${samples[$i]}" -gt "$first_max" ] && first_max=${samples[$i]}; done
for ((i = n - q; i < n; i++)); do [ "${samples[$i]}" -gt "$last_max" ] && last_max=${samples[$i]}; done
limit=$((first_max + first_max * tolerance / 100))
printf 'soak: %d clients (%d ok, %d killed, %d failed), %d samples\n' \
  "$((ok + killed + failed))" "$ok" "$killed" "$failed" "$n"
printf 'soak: peak RSS first quarter %d KiB, last quarter %d KiB (limit %d KiB, +%d%%)\n' \
  "$first_max" "$last_max" "$limit" "$tolerance"
if [ "$last_max" -gt "$limit" ]; then
  echo "soak: FAIL: memory grew"
  verdict=1
elif [ "$verdict" = 0 ]; then
  echo "soak: PASS: memory flat"
fi
[ "$verdict" = 0 ] && rm -rf "$logdir"
exit "$verdict"
