# shellcheck shell=bash
# Sourced by build_linux.sh and build_macos.sh: where things are, which Python, the version.
# Sets ROOT, PACKAGING, PYTHON, DIST_DIR, BUILD_DIR and VERSION; stops when PyInstaller is missing.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PACKAGING="$ROOT/packaging"
if [[ -z "${PYTHON:-}" ]]; then
  if [[ -x "$ROOT/.venv/bin/python" ]]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=python3; fi
fi
DIST_DIR=$(mkdir -p "${DIST_DIR:-$ROOT/dist}" && cd "${DIST_DIR:-$ROOT/dist}" && pwd)
BUILD_DIR=$(mkdir -p "${BUILD_DIR:-$ROOT/build}" && cd "${BUILD_DIR:-$ROOT/build}" && pwd)
VERSION=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$ROOT/domi_desktop/__init__.py")
export ROOT PACKAGING PYTHON DIST_DIR BUILD_DIR VERSION

if ! "$PYTHON" -c 'import PyInstaller' 2>/dev/null; then
  echo "$(basename "$0"): PyInstaller is not installed for $PYTHON" >&2
  echo "  install it with: $PYTHON -m pip install pyinstaller==6.22.3" >&2
  exit 1
fi
