#!/usr/bin/env bash
# Runs inside `xvfb-run dbus-run-session` (started by ./run test): an unlocked gnome-keyring on this private
# session bus with its own HOME for keyrings (shared/reference/desktop.md §3), then the whole pytest suite
# (or, after --exec, any command: the benchmarks that need a real desktop session use that).
set -euo pipefail
export TENANT_EVENTS_TEST_SESSION=1
keyring_home="$(mktemp -d)"
export XDG_DATA_HOME="$keyring_home/share"
mkdir -p "$XDG_DATA_HOME"
eval "$(printf %s "ci-keyring-password" | gnome-keyring-daemon --unlock --components=secrets)"
export GNOME_KEYRING_CONTROL SSH_AUTH_SOCK 2>/dev/null || true
export TENANT_EVENTS_REAL_KEYRING=1
status=0
if [ "${1:-}" = "--exec" ]; then  # benchmarks reuse this session: ./run test is pytest, bench/ runs commands
  shift; "$@" || status=$?
else
  python -m pytest "$@" || status=$?
fi
# pytest exits 5 when nothing was collected: that is a failure of the suite, not a pass.
exit "$status"
