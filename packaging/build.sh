#!/usr/bin/env bash
# Builds the one-folder app into dist/TenantEvents/ and a versioned tarball beside it. Called by `./run build`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
py="${PYTHON_BIN:-$root/.venv/bin/python}"
version="$("$py" -c 'import tenant_events; print(tenant_events.__version__)')"
arch="$(uname -m)"
rm -rf build/pyinstaller dist/TenantEvents
"$py" -m PyInstaller --noconfirm --clean --log-level WARN \
  --workpath build/pyinstaller --distpath dist packaging/tenant-events.spec
cp packaging/linux/install.sh packaging/linux/uninstall.sh dist/TenantEvents/
tarball="dist/TenantEvents-${version}-linux-${arch}.tar.gz"
tar -C dist -czf "$tarball" TenantEvents
echo "built dist/TenantEvents ($(du -sh dist/TenantEvents | cut -f1) unpacked) and $tarball ($(du -sh "$tarball" | cut -f1))"
