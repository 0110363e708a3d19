#!/usr/bin/env bash
# Builds the one-folder app into $DIST_DIR/TenantEvents/ (default dist/), and beside it a versioned tarball and a
# Debian package (tenant-events_<version>_<arch>.deb).
# Called by `./run build`; the packaging tests call it with DIST_DIR/BUILD_DIR in a temp dir, and with NO_TARBALL=1:
# they install the bundle and the package, never the tarball, and its gzip of the whole bundle is a quarter of the
# build's CPU.
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
rm -f "$tarball"
if [ "${NO_TARBALL:-0}" != 1 ]; then
  tar -C "$dist" -czf "$tarball" TenantEvents
fi
if command -v dpkg-deb >/dev/null 2>&1; then
  bash packaging/linux/build_deb.sh "$dist/TenantEvents" "$dist" "$version"
else
  echo "no dpkg-deb here: skipped the .deb (the bundle and tarball are built)" >&2
fi
echo "built $dist/TenantEvents ($(du -sh "$dist/TenantEvents" | cut -f1) unpacked)"
[ ! -f "$tarball" ] || echo "built $tarball ($(du -sh "$tarball" | cut -f1))"
