#!/usr/bin/env bash
# Linux: build the onedir bundle and the per-user tarball.
#
#   packaging/build_linux.sh
#
# Makes (paths relative to the repository root unless DIST_DIR/BUILD_DIR say otherwise):
#   dist/domi-desktop/                                    the PyInstaller bundle (run domi-desktop in it)
#   dist/domi-desktop-<version>-linux-<arch>.tar.gz       the bundle, a .desktop file, the icons,
#                                                         install.sh and uninstall.sh
#   dist/domi-desktop_<version>-1_<arch>.deb              the bundle as a Debian package
#                                                         (packaging/linux/build_deb.py)
#   dist/apt/                                             a signed flat apt repository of it
#                                                         (packaging/linux/apt_repo.py)
# Environment:
#   PYTHON     the interpreter with the app and PyInstaller installed (default .venv/bin/python,
#              else python3)
#   DIST_DIR   where the bundle and the tarball go (default dist)
#   BUILD_DIR  PyInstaller's work files and the generated icons (default build)
set -euo pipefail

# shellcheck source=packaging/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ARCH=$(uname -m)
NAME="domi-desktop-$VERSION-linux-$ARCH"
started=$(date +%s.%N)

echo "== icons"
"$PYTHON" "$PACKAGING/make_icons.py" --out "$BUILD_DIR/icons"

echo "== PyInstaller ($("$PYTHON" -m PyInstaller --version))"
DOMI_ICON_DIR="$BUILD_DIR/icons" "$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$DIST_DIR" --workpath "$BUILD_DIR/pyinstaller" "$PACKAGING/domi-desktop.spec"
BUNDLE="$DIST_DIR/domi-desktop"

echo "== tarball"
STAGE="$BUILD_DIR/stage/$NAME"
rm -rf "$BUILD_DIR/stage"
mkdir -p "$STAGE/icons/hicolor/scalable/apps"
cp -a "$BUNDLE" "$STAGE/domi-desktop"
install -m 0644 "$PACKAGING/linux/domi-desktop.desktop" "$STAGE/domi-desktop.desktop"
install -m 0755 "$PACKAGING/linux/install.sh" "$STAGE/install.sh"
install -m 0755 "$PACKAGING/linux/uninstall.sh" "$STAGE/uninstall.sh"
install -m 0644 "$ROOT/resources/domi-desktop.svg" "$STAGE/icons/hicolor/scalable/apps/domi-desktop.svg"
for size in 16 22 24 32 48 64 128 256 512; do
  mkdir -p "$STAGE/icons/hicolor/${size}x${size}/apps"
  install -m 0644 "$BUILD_DIR/icons/png/domi-desktop-$size.png" \
    "$STAGE/icons/hicolor/${size}x${size}/apps/domi-desktop.png"
done
printf '%s\n' "$VERSION" >"$STAGE/VERSION"
TARBALL="$DIST_DIR/$NAME.tar.gz"
# Reproducible-ish: sorted names, no owner names, one mtime (the last commit, else now).
MTIME=$(git -C "$ROOT" log -1 --format=%cI 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)
GZIP_PROGRAM=gzip
if command -v pigz >/dev/null; then GZIP_PROGRAM=pigz; fi # the same bytes' format, on all cores
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="$MTIME" \
  -C "$BUILD_DIR/stage" --use-compress-program="$GZIP_PROGRAM" -cf "$TARBALL" "$NAME"

# The .deb (from this very bundle) and a signed flat apt repository of it, where dpkg-deb exists.
# The repository is signed by DOMI_APT_KEY in DOMI_APT_GNUPGHOME when given (a release), else by
# a throw-away key made in $BUILD_DIR/gnupg now (its public half is in the repository).
DEB=""
if command -v dpkg-deb >/dev/null && command -v apt-ftparchive >/dev/null && command -v gpg >/dev/null; then
  echo "== .deb and apt repository"
  DEB=$("$PYTHON" "$PACKAGING/linux/build_deb.py" --bundle "$BUNDLE" --icons "$BUILD_DIR/icons/png" \
    --out "$DIST_DIR")
  rm -rf "$DIST_DIR/apt"
  if [[ -n "${DOMI_APT_KEY:-}" ]]; then
    "$PYTHON" "$PACKAGING/linux/apt_repo.py" --repo "$DIST_DIR/apt" \
      --gnupghome "${DOMI_APT_GNUPGHOME:-${GNUPGHOME:-$HOME/.gnupg}}" --key "$DOMI_APT_KEY" "$DEB"
  else
    rm -rf "$BUILD_DIR/gnupg"
    "$PYTHON" "$PACKAGING/linux/apt_repo.py" --repo "$DIST_DIR/apt" --gnupghome "$BUILD_DIR/gnupg" "$DEB"
  fi
else
  echo "== no .deb: dpkg-deb, apt-ftparchive (apt-utils) or gpg is missing"
fi

finished=$(date +%s.%N)
echo "== done in $(awk -v a="$started" -v b="$finished" 'BEGIN { printf "%.1f", b - a }') s"
echo "bundle   $BUNDLE ($(du -sh "$BUNDLE" | cut -f1))"
echo "tarball  $TARBALL ($(du -h "$TARBALL" | cut -f1))"
if [[ -n $DEB ]]; then echo "deb      $DEB ($(du -h "$DEB" | cut -f1)), repository $DIST_DIR/apt"; fi
echo "smoke test: $PYTHON $PACKAGING/smoke_test.py $BUNDLE/domi-desktop"
