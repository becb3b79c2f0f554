# shellcheck shell=bash
# Sourced by the UCX and MPI tests over braid0 (run_ucx_perftest.sh,
# run_mpi.sh) and by bench/ucx_mpi_ab.sh.
#
# ucx_setup LIB NODE_SCRIPT makes the run's work directory ($WORK, also
# TMPDIR, so MPI's session files land in it), sets PRELOAD for LIB
# (tests/perftest/preload.sh) and makes sure UCX can see braid0: when
# /dev/infiniband/uverbs-braid0 is absent it is created with NODE_SCRIPT
# (scripts/braid0-node.sh) and removed again on exit. Without the node and
# without root, the caller is skipped (exit 77). The exit trap kills every
# process registered with ucx_track, removes the node if this run made it,
# and removes $WORK (kept, and named, when the run failed and
# UCX_KEEP_LOGS=1).
UCX_LIB_DIR=$(dirname "${BASH_SOURCE[0]}")
source "$UCX_LIB_DIR/../perftest/preload.sh"

NODE_MADE=0
TRACKED_PIDS=()

# Registers process $1 to be ended (its group, when it leads one) on exit.
ucx_track() {
  TRACKED_PIDS+=("$1")
}

ucx_cleanup() {
  local rc=$? pid
  for pid in "${TRACKED_PIDS[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      # A process started with setsid leads its group: end the group.
      kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
    fi
  done
  if [[ $NODE_MADE -eq 1 ]]; then
    "$NODE_SCRIPT" --remove >/dev/null || rc=1
  fi
  if [[ $rc -ne 0 && $rc -ne 77 && ${UCX_KEEP_LOGS:-0} == 1 ]]; then
    echo "logs kept in $WORK"
  else
    rm -rf "$WORK"
  fi
  exit "$rc"
}

ucx_setup() {
  local lib=$1
  NODE_SCRIPT=$(readlink -f "$2")
  verbs_preload "$(readlink -f "$lib")"
  WORK=$(mktemp -d /tmp/braid-ucx.XXXXXX)
  export TMPDIR=$WORK
  trap ucx_cleanup EXIT
  trap 'exit 1' INT TERM
  if ! "$NODE_SCRIPT" --check >/dev/null 2>&1; then
    if [[ $(id -u) -ne 0 ]]; then
      echo "SKIP: /dev/infiniband/uverbs-braid0 is absent and making it needs root (scripts/braid0-node.sh)"
      exit 77
    fi
    "$NODE_SCRIPT" >/dev/null || exit 1
    NODE_MADE=1
  fi
}

# Exits 77 (skipped) unless every program named is installed.
ucx_require() {
  local tool
  for tool in "$@"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "SKIP: $tool is not installed (scripts/deps.sh installs it)"
      exit 77
    fi
  done
}

# Prints a free TCP port in 30000..49999 (for an out-of-band exchange).
ucx_free_port() {
  local port i
  for i in $(seq 1 50); do
    port=$((30000 + RANDOM % 20000))
    if ! ss -ltnH "sport = :$port" 2>/dev/null | grep -q .; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

# Waits (up to 10 s) until TCP port $1 has a listener, while process $2 lives.
ucx_wait_listen() {
  local port=$1 pid=$2
  for _ in $(seq 1 200); do
    if ss -ltnH "sport = :$port" 2>/dev/null | grep -q .; then return 0; fi
    kill -0 "$pid" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# Milliseconds since the epoch.
ucx_now_ms() {
  date +%s%3N
}

# ucx_run_mpi LOG SECONDS CMD...: runs an MPI launch (its own process group)
# with output to LOG and returns its exit status, or 124 when it outlived
# SECONDS, or 3 when the program printed "mpi_pingpong: ok" and then did not
# exit within 3 s (stuck in MPI_Finalize; the group is ended). MPICH 4.0.2
# over UCX 1.13's tcp transport does that in about one run in ten on a busy
# 2-CPU host, without braid involved.
ucx_run_mpi() {
  local log=$1 secs=$2 pid ok_at=-1 t=0
  shift 2
  : >"$log"
  setsid "$@" >"$log" 2>&1 &
  pid=$!
  ucx_track "$pid"
  while kill -0 "$pid" 2>/dev/null; do
    if [[ $ok_at -lt 0 ]] && grep -q "^mpi_pingpong: ok" "$log"; then
      ok_at=$t
    fi
    if [[ $ok_at -ge 0 && $((t - ok_at)) -ge 30 ]] || [[ $t -ge $((secs * 10)) ]]; then
      kill -- "-$pid" 2>/dev/null
      sleep 0.5
      kill -KILL -- "-$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
      [[ $ok_at -ge 0 ]] && return 3
      return 124
    fi
    sleep 0.1
    t=$((t + 1))
  done
  wait "$pid"
}
