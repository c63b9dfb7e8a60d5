#!/usr/bin/env bash
# Install domi-desktop for the current user; no root needed. Run it from the unpacked tarball:
#
#   ./install.sh [--autostart] [--prefix DIR]
#
# Puts the bundle in ~/.local/opt/domi-desktop (with uninstall.sh), links ~/.local/bin/domi-desktop
# to it, adds the menu entry to $XDG_DATA_HOME/applications and the icon to the hicolor theme in
# $XDG_DATA_HOME/icons. --autostart also starts it at login ($XDG_CONFIG_HOME/autostart), the same
# entry as the app's own "Start at login" switch. Running it again upgrades in place; your
# schedules, history and secrets are kept (they live in the data dir and the OS keyring).
set -euo pipefail

usage() {
  cat <<'EOF'
usage: install.sh [--autostart] [--prefix DIR]

  --autostart   start domi-desktop at login (XDG autostart entry)
  --prefix DIR  install into DIR/opt/domi-desktop and DIR/bin (default ~/.local)
EOF
}

die() {
  echo "install.sh: $*" >&2
  exit 1
}

MARKER="X-Domi-Desktop=1"

# The Desktop Entry spec's Exec quoting, then its string escaping (as domi_desktop.platform.autostart).
desktop_exec() {
  local arg=${1//%/%%}
  case $arg in
    *[[:space:]\"\'\\\<\>~\|\&\;\$\*\?\#\(\)\`]*)
      arg=${arg//\\/\\\\}
      arg=${arg//\"/\\\"}
      arg=${arg//\`/\\\`}
      arg=${arg//\$/\\\$}
      arg="\"$arg\""
      ;;
  esac
  printf '%s' "${arg//\\/\\\\}"
}

# The shipped .desktop file with Exec and TryExec pointing at the installed executable, marked ours.
desktop_entry() {
  local template=$1 executable=$2 line
  while IFS= read -r line || [[ -n $line ]]; do
    case $line in
      Exec=*) printf 'Exec=%s\n' "$(desktop_exec "$executable")" ;;
      TryExec=*) printf 'TryExec=%s\n' "${executable//\\/\\\\}" ;;
      *) printf '%s\n' "$line" ;;
    esac
  done <"$template"
  printf '%s\n' "$MARKER"
}

# $XDG_*_HOME only when absolute, as the XDG Base Directory spec says.
xdg_dir() {
  local value=$1 fallback=$2
  if [[ $value == /* ]]; then printf '%s' "$value"; else printf '%s' "$fallback"; fi
}

main() {
  local here prefix="$HOME/.local" autostart=0
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  while [[ $# -gt 0 ]]; do
    case $1 in
      --autostart) autostart=1 ;;
      --prefix)
        [[ $# -ge 2 ]] || die "--prefix needs a directory"
        prefix=$2
        shift
        ;;
      --prefix=*) prefix=${1#--prefix=} ;;
      -h | --help)
        usage
        return 0
        ;;
      *)
        usage >&2
        exit 2
        ;;
    esac
    shift
  done
  [[ -x "$here/domi-desktop/domi-desktop" ]] || die "no bundle at $here/domi-desktop: run me from the unpacked tarball"
  mkdir -p "$prefix"
  prefix=$(cd "$prefix" && pwd)

  local data_home config_home app_dir bin_link applications icons autostart_file
  data_home=$(xdg_dir "${XDG_DATA_HOME:-}" "$HOME/.local/share")
  config_home=$(xdg_dir "${XDG_CONFIG_HOME:-}" "$HOME/.config")
  app_dir="$prefix/opt/domi-desktop"
  bin_link="$prefix/bin/domi-desktop"
  applications="$data_home/applications/domi-desktop.desktop"
  icons="$data_home/icons/hicolor"
  autostart_file="$config_home/autostart/domi-desktop.desktop"

  # Refuse to clobber what is not ours: another program's folder, a pip-installed script.
  if [[ -e $app_dir && ! -f "$app_dir/.install-paths" ]]; then
    die "$app_dir exists and was not installed by this script; remove it first"
  fi
  if [[ -e $bin_link || -L $bin_link ]] && [[ ! -L $bin_link ]]; then
    die "$bin_link exists and is not our link (a pip install?); remove it first"
  fi

  # Copy next to the old version, then swap: a failed copy leaves the old install intact.
  local new="$app_dir.new.$$" old="$app_dir.old.$$"
  mkdir -p "$prefix/opt" "$prefix/bin"
  rm -rf "$new"
  cp -a "$here/domi-desktop" "$new"
  install -m 0755 "$here/uninstall.sh" "$new/uninstall.sh"
  {
    echo "# written by install.sh; read by uninstall.sh"
    echo "version=$(cat "$here/VERSION" 2>/dev/null || echo unknown)"
    echo "bin=$bin_link"
    echo "applications=$applications"
    echo "icons=$icons"
    echo "autostart=$autostart_file"
  } >"$new/.install-paths"
  if [[ -e $app_dir ]]; then mv "$app_dir" "$old"; fi
  mv "$new" "$app_dir"
  rm -rf "$old"
  ln -sfn "$app_dir/domi-desktop" "$bin_link"

  mkdir -p "$(dirname "$applications")"
  desktop_entry "$here/domi-desktop.desktop" "$app_dir/domi-desktop" >"$applications"
  chmod 0644 "$applications"

  local source size
  for source in "$here"/icons/hicolor/*/apps/domi-desktop.*; do
    size=$(basename "$(dirname "$(dirname "$source")")")
    install -D -m 0644 "$source" "$icons/$size/apps/$(basename "$source")"
  done
  touch "$icons" # icon theme caches notice a newer folder and rescan it

  if [[ $autostart -eq 1 ]]; then
    if [[ -f $autostart_file ]] && ! grep -qx "$MARKER" "$autostart_file"; then
      echo "install.sh: $autostart_file was not written by domi-desktop; left alone" >&2
    else
      mkdir -p "$(dirname "$autostart_file")"
      desktop_entry "$here/domi-desktop.desktop" "$app_dir/domi-desktop" >"$autostart_file"
      echo "starts at login: $autostart_file"
    fi
  fi

  echo "installed domi-desktop $("$app_dir/domi-desktop" --version | cut -d' ' -f2) in $app_dir"
  echo "  command   $bin_link"
  echo "  menu      $applications"
  echo "  uninstall $app_dir/uninstall.sh"
  case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "note: $prefix/bin is not on your PATH; add it, or run $bin_link" ;;
  esac
}

main "$@"
