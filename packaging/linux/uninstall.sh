#!/usr/bin/env bash
# Remove domi-desktop installed by install.sh: the bundle, the ~/.local/bin link, the menu entry,
# the icons and the login entry (only files domi-desktop wrote). Stops a running instance first.
# Your schedules and history (the data dir) and the secrets in the OS keyring are kept; the last
# lines say where the data dir is, to remove it by hand if you want.
#
#   ~/.local/opt/domi-desktop/uninstall.sh           (installed copy)
#   ./uninstall.sh [--prefix DIR]                    (from the tarball: the default or DIR install)
set -euo pipefail

MARKER="X-Domi-Desktop=1"

die() {
  echo "uninstall.sh: $*" >&2
  exit 1
}

# One value of .install-paths (key=value lines); never sourced.
recorded() {
  local key=$1 line
  while IFS= read -r line; do
    if [[ $line == "$key="* ]]; then
      printf '%s' "${line#"$key="}"
      return 0
    fi
  done <"$APP_DIR/.install-paths"
  return 1
}

remove_if_ours() {
  local file=$1
  if [[ -f $file ]] && grep -qx "$MARKER" "$file"; then
    rm -f "$file"
    echo "removed $file"
  elif [[ -e $file ]]; then
    echo "kept $file: not written by domi-desktop" >&2
  fi
}

main() {
  local here prefix=""
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  while [[ $# -gt 0 ]]; do
    case $1 in
      --prefix)
        [[ $# -ge 2 ]] || die "--prefix needs a directory"
        prefix=$2
        shift
        ;;
      --prefix=*) prefix=${1#--prefix=} ;;
      -h | --help)
        echo "usage: uninstall.sh [--prefix DIR]   (default: where this copy is installed, else ~/.local)"
        return 0
        ;;
      *) die "unknown option $1" ;;
    esac
    shift
  done
  if [[ -n $prefix ]]; then
    APP_DIR="$prefix/opt/domi-desktop"
  elif [[ -f "$here/.install-paths" ]]; then
    APP_DIR=$here
  else
    APP_DIR="$HOME/.local/opt/domi-desktop"
  fi
  [[ -f "$APP_DIR/.install-paths" ]] || die "no domi-desktop installed by install.sh in $APP_DIR"

  local exe="$APP_DIR/domi-desktop" data_dir="" bin applications icons autostart
  bin=$(recorded bin) || bin=""
  applications=$(recorded applications) || applications=""
  icons=$(recorded icons) || icons=""
  autostart=$(recorded autostart) || autostart=""

  if [[ -x $exe ]]; then
    data_dir=$("$exe" status --json 2>/dev/null | sed -n 's/.*"data_dir": *"\([^"]*\)".*/\1/p') || true
    if "$exe" quit >/dev/null 2>&1; then
      echo "stopping the running domi-desktop"
      for _ in $(seq 50); do
        "$exe" status >/dev/null 2>&1 || break
        sleep 0.1
      done
    fi
  fi

  if [[ -n $bin && -L $bin && $(readlink "$bin") == "$exe" ]]; then
    rm -f "$bin"
    echo "removed $bin"
  fi
  [[ -z $applications ]] || remove_if_ours "$applications"
  [[ -z $autostart ]] || remove_if_ours "$autostart"
  if [[ -n $icons ]]; then
    rm -f "$icons"/*/apps/domi-desktop.png "$icons"/*/apps/domi-desktop.svg
    [[ ! -d $icons ]] || touch "$icons"
    echo "removed the icons from $icons"
  fi
  rm -rf "$APP_DIR"
  echo "removed $APP_DIR"
  if [[ -n $data_dir ]]; then
    echo "kept your schedules and history in $data_dir (remove that folder to delete them)"
  fi
  echo "secrets stay in the OS keyring under the service 'domi-desktop' until you delete them"
}

# Everything runs from main: bash has read the whole script before the folder holding it goes.
main "$@"
