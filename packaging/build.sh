#!/usr/bin/env bash
# Builds the one-folder app into $DIST_DIR/TenantEvents/ (default dist/) and a versioned tarball beside it.
# Called by `./run build`; the packaging tests call it with DIST_DIR/BUILD_DIR in a temp dir.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
py="${PYTHON_BIN:-$root/.venv/bin/python}"
dist="${DIST_DIR:-dist}"
work="${BUILD_DIR:-build/pyinstaller}"
version="$("$py" -c 'import tenant_events; print(tenant_events.__version__)')"
arch="$(uname -m)"
rm -rf "$work" "$dist/TenantEvents"
"$py" -m PyInstaller --noconfirm --clean --log-level WARN --workpath "$work" --distpath "$dist" \
  packaging/tenant-events.spec
cp packaging/linux/install.sh packaging/linux/uninstall.sh "$dist/TenantEvents/"
tarball="$dist/TenantEvents-${version}-linux-${arch}.tar.gz"
tar -C "$dist" -czf "$tarball" TenantEvents
echo "built $dist/TenantEvents ($(du -sh "$dist/TenantEvents" | cut -f1) unpacked) and $tarball ($(du -sh "$tarball" | cut -f1))"
