#!/usr/bin/env bash
# User-level install of the built app: no root, puts Tenant Events in the desktop menu with its icon.
#   packaging/linux/install.sh [BUNDLE_DIR]   (default: the folder this script sits in, else dist/TenantEvents)
# Files: ~/.local/opt/TenantEvents/, ~/.local/bin/tenant-events, ~/.local/share/applications/<id>.desktop,
# ~/.local/share/icons/hicolor/<size>/apps/<id>.png, ~/.local/share/metainfo/<id>.metainfo.xml.
set -euo pipefail
APP_ID="io.github.tenantevents.TenantEvents"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bundle="${1:-}"
if [ -z "$bundle" ]; then
  if [ -x "$here/TenantEvents" ]; then bundle="$here"; else bundle="$here/../../dist/TenantEvents"; fi
fi
bundle="$(cd "$bundle" && pwd)"
[ -x "$bundle/TenantEvents" ] || { echo "No built app in $bundle (run ./run build first)." >&2; exit 2; }
res="$bundle/_internal/resources"

data="${XDG_DATA_HOME:-$HOME/.local/share}"
prefix="$HOME/.local/opt/TenantEvents"
bindir="$HOME/.local/bin"

if [ "$bundle" != "$prefix" ]; then
  rm -rf "$prefix.new"; mkdir -p "$(dirname "$prefix")"
  cp -a "$bundle" "$prefix.new"
  rm -rf "$prefix"; mv "$prefix.new" "$prefix"
fi
mkdir -p "$bindir" "$data/applications" "$data/metainfo"
ln -sfn "$prefix/TenantEvents" "$bindir/tenant-events"

for png in "$res"/icons/png/tenant-events-*.png; do
  size="${png##*-}"; size="${size%.png}"
  mkdir -p "$data/icons/hicolor/${size}x${size}/apps"
  cp "$png" "$data/icons/hicolor/${size}x${size}/apps/$APP_ID.png"
done
mkdir -p "$data/icons/hicolor/scalable/apps"
cp "$res/icons/tenant-events.svg" "$data/icons/hicolor/scalable/apps/$APP_ID.svg"

# Absolute Exec/TryExec so the menu entry works even when ~/.local/bin is not on PATH.
sed -e "s|^Exec=tenant-events|Exec=$prefix/TenantEvents|" -e "s|^TryExec=tenant-events|TryExec=$prefix/TenantEvents|" \
  "$res/linux/$APP_ID.desktop" > "$data/applications/$APP_ID.desktop"
cp "$res/linux/$APP_ID.metainfo.xml" "$data/metainfo/"

command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$data/applications" || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$data/icons/hicolor" 2>/dev/null || true
echo "Installed Tenant Events to $prefix; it is in your applications menu, and '$bindir/tenant-events' runs it."
