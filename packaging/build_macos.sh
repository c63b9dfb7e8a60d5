#!/usr/bin/env bash
# macOS: build domi-desktop.app and wrap it in a .dmg.
#
#   packaging/build_macos.sh
#
# Makes:
#   dist/domi-desktop.app                            LSUIElement (menu bar only, no Dock icon),
#                                                    NSAppSleepDisabled (no App Nap), macOS 13+,
#                                                    org.domi.desktop: packaging/macos/info_plist.py
#   dist/domi-desktop-<version>-macos-<arch>.dmg     the app and a link to /Applications
#
# Signing: ad-hoc by default (PyInstaller signs every binary and the bundle with "-"), which runs
# on the machine that built it and, after the quarantine prompt, elsewhere. For a release, set:
#   DOMI_CODESIGN_IDENTITY  "Developer ID Application: Name (TEAMID)" from the login keychain:
#                           signs with the hardened runtime and packaging/macos/entitlements.plist
#                           (or DOMI_ENTITLEMENTS), and signs the .dmg
# and to notarize (needs the identity), either
#   DOMI_NOTARY_PROFILE     a profile saved by `xcrun notarytool store-credentials`, or
#   DOMI_NOTARY_APPLE_ID, DOMI_NOTARY_TEAM_ID, DOMI_NOTARY_PASSWORD (an app-specific password)
# The .dmg is then submitted, waited for (only the status "Accepted" passes: packaging/notary.py),
# and the ticket stapled to it.
#
# Environment: PYTHON (default .venv/bin/python, else python3), DIST_DIR (dist), BUILD_DIR (build).
set -euo pipefail

IDENTITY=${DOMI_CODESIGN_IDENTITY:-}

if [[ $(uname -s) != Darwin ]]; then
  echo "build_macos.sh: run me on macOS (codesign, hdiutil)" >&2
  exit 1
fi
# shellcheck source=packaging/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ARCH=$(uname -m)
APP="$DIST_DIR/domi-desktop.app"
DMG="$DIST_DIR/domi-desktop-$VERSION-macos-$ARCH.dmg"

echo "== icons"
"$PYTHON" "$PACKAGING/make_icons.py" --out "$BUILD_DIR/icons"

echo "== PyInstaller ($("$PYTHON" -m PyInstaller --version)), signing: ${IDENTITY:-ad-hoc}"
DOMI_ICON_DIR="$BUILD_DIR/icons" "$PYTHON" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$DIST_DIR" --workpath "$BUILD_DIR/pyinstaller" "$PACKAGING/domi-desktop.spec"

echo "== check the bundle"
plist() { /usr/libexec/PlistBuddy -c "Print :$1" "$APP/Contents/Info.plist"; }
plist LSUIElement | grep -qx true
plist NSAppSleepDisabled | grep -qx true
plist LSMinimumSystemVersion | grep -qx 13.0
plist CFBundleShortVersionString | grep -qx "$VERSION"
codesign --verify --deep --strict --verbose=2 "$APP"
codesign --display --verbose=2 "$APP" 2>&1 | grep -E '^(Identifier|Signature|TeamIdentifier)='

echo "== dmg"
STAGE="$BUILD_DIR/dmg"
rm -rf "$STAGE" "$DMG"
mkdir -p "$STAGE"
ditto "$APP" "$STAGE/domi-desktop.app"
ln -s /Applications "$STAGE/Applications"
hdiutil create -volname "domi-desktop $VERSION" -srcfolder "$STAGE" -fs HFS+ -format UDZO \
  -imagekey zlib-level=9 -ov "$DMG" >/dev/null
if [[ -n $IDENTITY ]]; then
  codesign --force --timestamp --sign "$IDENTITY" "$DMG"
fi

if [[ -n $IDENTITY && (-n ${DOMI_NOTARY_PROFILE:-} || -n ${DOMI_NOTARY_APPLE_ID:-}) ]]; then
  echo "== notarize"
  if [[ -n ${DOMI_NOTARY_PROFILE:-} ]]; then
    auth=(--keychain-profile "$DOMI_NOTARY_PROFILE")
  else
    auth=(--apple-id "$DOMI_NOTARY_APPLE_ID"
      --team-id "${DOMI_NOTARY_TEAM_ID:?DOMI_NOTARY_TEAM_ID is needed with DOMI_NOTARY_APPLE_ID}"
      --password "${DOMI_NOTARY_PASSWORD:?DOMI_NOTARY_PASSWORD is needed with DOMI_NOTARY_APPLE_ID}")
  fi
  # notarytool exits 0 on "Invalid" too: the verdict is the JSON's status (packaging/notary.py).
  answer="$BUILD_DIR/notary.json"
  xcrun notarytool submit "$DMG" "${auth[@]}" --wait --output-format json >"$answer" || true
  if ! "$PYTHON" "$PACKAGING/notary.py" "$answer"; then
    if id=$("$PYTHON" "$PACKAGING/notary.py" --id "$answer"); then
      xcrun notarytool log "$id" "${auth[@]}" || true
    fi
    exit 1
  fi
  xcrun stapler staple "$DMG"
  xcrun stapler validate "$DMG"
elif [[ -n ${DOMI_NOTARY_PROFILE:-}${DOMI_NOTARY_APPLE_ID:-} ]]; then
  echo "build_macos.sh: notarization needs DOMI_CODESIGN_IDENTITY (ad-hoc apps are refused)" >&2
  exit 1
fi

echo "app    $APP ($(du -sh "$APP" | cut -f1))"
echo "dmg    $DMG ($(du -h "$DMG" | cut -f1))"
echo "smoke test: $PYTHON $PACKAGING/smoke_test.py $APP/Contents/MacOS/domi-desktop"
