#!/usr/bin/env bash
# Runs inside `xvfb-run dbus-run-session` (started by ./run test): an unlocked gnome-keyring on this private
# session bus with its own HOME for keyrings, then the whole pytest suite on parallel workers
# (or, after --exec, any command: the benchmarks that need a real desktop session use that).
set -euo pipefail
export TENANT_EVENTS_TEST_SESSION=1
keyring_home="$(mktemp -d)"
export XDG_DATA_HOME="$keyring_home/share"
# The keyring daemon detaches from this shell and outlives the session's bus: at exit it is found by the
# XDG_DATA_HOME it was started with (no other session's daemon has it) and ended, and its keyrings go with it.
end_session() {
  local pid
  for pid in $(pgrep -x gnome-keyring-d || true); do
    if { tr '\0' '\n' < "/proc/$pid/environ"; } 2>/dev/null | grep -qxF "XDG_DATA_HOME=$XDG_DATA_HOME"; then
      kill "$pid" 2>/dev/null || true
    fi
  done
  rm -rf "$keyring_home"
}
trap end_session EXIT
mkdir -p "$XDG_DATA_HOME"
eval "$(printf %s "ci-keyring-password" | gnome-keyring-daemon --unlock --components=secrets)"
export GNOME_KEYRING_CONTROL SSH_AUTH_SOCK 2>/dev/null || true
export TENANT_EVENTS_REAL_KEYRING=1
status=0
if [ "${1:-}" = "--exec" ]; then  # benchmarks reuse this session: ./run test is pytest, bench/ runs commands
  shift; "$@" || status=$?
else
  # Workers run side by side, each in a desktop session of its own (tests/helpers/worker_session.py); most
  # tests wait on servers and subprocesses, so more workers than cores pays (on two cores: 4 workers 351 s,
  # 6 workers 295 s, 8 workers 269 s for the whole .ci/run). `-n 0` (or -n N) overrides.
  parallel=(-n "${TEST_WORKERS:-8}" --dist loadgroup)
  for arg in "$@"; do
    case "$arg" in -n|-n*|--numprocesses*|--pdb|--trace|no:xdist) parallel=() ;; esac
  done
  # Compiled test modules (with pytest's assertion rewriting) are kept in the ignored __pycache__ folders; on a
  # fresh checkout one collection compiles them once, instead of every worker compiling all of them.
  unset PYTHONDONTWRITEBYTECODE
  if [ ${#parallel[@]} -gt 0 ] && [ ! -d tests/__pycache__ ]; then
    python -m pytest -p no:xdist --collect-only -q >/dev/null 2>&1 || true
  fi
  python -m pytest "${parallel[@]}" "$@" || status=$?
fi
# pytest exits 5 when nothing was collected: that is a failure of the suite, not a pass.
exit "$status"
