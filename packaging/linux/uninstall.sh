#!/usr/bin/env bash
# Removes what install.sh put in place. Your events, settings and sign-ins stay (delete them from the app's
# data folder yourself if you want them gone); the start-at-login entry is removed too.
set -euo pipefail
APP_ID="io.github.tenantevents.TenantEvents"
data="${XDG_DATA_HOME:-$HOME/.local/share}"
config="${XDG_CONFIG_HOME:-$HOME/.config}"
rm -rf "$HOME/.local/opt/TenantEvents"
link="$HOME/.local/bin/tenant-events"
if [ -L "$link" ]; then rm -f "$link"; fi
rm -f "$data/applications/$APP_ID.desktop" "$data/metainfo/$APP_ID.metainfo.xml" "$config/autostart/$APP_ID.desktop"
find "$data/icons/hicolor" -name "$APP_ID.*" -delete 2>/dev/null || true
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$data/applications" || true
echo "Tenant Events removed. Your data is kept in ${XDG_DATA_HOME:-$HOME/.local/share}/tenant-events."
