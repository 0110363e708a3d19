#!/usr/bin/env bash
# Packs the built one-folder app into a Debian package beside it: tenant-events_<version>_<arch>.deb.
#   packaging/linux/build_deb.sh BUNDLE_DIR OUT_DIR VERSION
# Layout: the bundle under /opt/tenant-events, the `tenant-events` command in /usr/bin, the menu entry (which
# also registers the tenant-events:// link scheme), hicolor icons and AppStream metadata under /usr/share.
# No maintainer scripts: dpkg's triggers of desktop-file-utils and the icon theme refresh the menu and icons.
set -euo pipefail
bundle="$(cd "$1" && pwd)"; out="$(cd "$2" && pwd)"; version="$3"
APP_ID="io.github.tenantevents.TenantEvents"
res="$bundle/_internal/resources"
arch="$(dpkg --print-architecture)"
glibc="$(getconf GNU_LIBC_VERSION | cut -d" " -f2)"  # the bundle needs at least the C library it was built on
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

install -d "$stage/opt" "$stage/usr/bin" "$stage/usr/share/applications" "$stage/usr/share/metainfo" \
  "$stage/usr/share/doc/tenant-events" "$stage/DEBIAN"
cp -a "$bundle" "$stage/opt/tenant-events"
rm -f "$stage/opt/tenant-events/install.sh" "$stage/opt/tenant-events/uninstall.sh"  # the package replaces them
ln -s ../../opt/tenant-events/TenantEvents "$stage/usr/bin/tenant-events"
install -m 644 "$res/linux/$APP_ID.desktop" "$stage/usr/share/applications/$APP_ID.desktop"
install -m 644 "$res/linux/$APP_ID.metainfo.xml" "$stage/usr/share/metainfo/$APP_ID.metainfo.xml"
for png in "$res"/icons/png/tenant-events-*.png; do
  size="${png##*-}"; size="${size%.png}"
  install -D -m 644 "$png" "$stage/usr/share/icons/hicolor/${size}x${size}/apps/$APP_ID.png"
done
install -D -m 644 "$res/icons/tenant-events.svg" "$stage/usr/share/icons/hicolor/scalable/apps/$APP_ID.svg"
cat > "$stage/usr/share/doc/tenant-events/copyright" <<TXT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: Tenant Events
License: MIT
Comment: The bundled Python runtime and libraries keep their own licences; see /opt/tenant-events/_internal.
TXT
find "$stage/opt" "$stage/usr" -type d -exec chmod 755 {} +

size_kib="$(du -sk --exclude=DEBIAN "$stage" | cut -f1)"
cat > "$stage/DEBIAN/control" <<CTL
Package: tenant-events
Version: $version
Architecture: $arch
Maintainer: Tenant Events developers <maintainers@tenant-events.invalid>
Installed-Size: $size_kib
Depends: libc6 (>= $glibc), libegl1, libfontconfig1, libxkbcommon-x11-0, libdbus-1-3, fonts-dejavu-core | fonts-liberation2 | fonts-noto-core
Recommends: gnome-keyring | kwalletmanager | keepassxc, xdg-utils
Section: net
Priority: optional
Description: follow an identity tenant's event stream from the tray
 Tenant Events signs in to an identity tenant through the browser, follows its
 event stream into a local store (no event lost, none shown twice), shows the
 events in fast filterable tables and raises alerts from rules. A bundled
 tenant simulator lets you try it without an account.
CTL
deb="$out/tenant-events_${version}_${arch}.deb"
# gzip level 6, not dpkg-deb's 9: a third of the time (4 s against 14 s here) for a package 0.4 % larger
dpkg-deb --root-owner-group -Zgzip -z6 --build "$stage" "$deb" >/dev/null
echo "built $deb ($(du -h "$deb" | cut -f1), $((size_kib / 1024)) MiB installed)"
