#!/usr/bin/env bash
# Find or unpack the Nav2 that the end-to-end tests and `source tools/nav2_env.sh` use, for a
# venv set-up (no ROS install; a ROS install's own Nav2 is used as it is, nothing to do here).
#
#   tools/nav2_prefix.sh DISTRO
#
# - WHEELSIM_NAV2_PREFIX=DIR (a colcon install prefix with nav2_bringup, sourced through its
#   nav2_env.sh or local_setup.bash) is used as it is;
# - otherwise, for Jazzy, the packed prefix ../shared/nav2/nav2-jazzy-prefix.tar.xz (Nav2 1.3.13
#   built against the ros-jazzy wheels) is unpacked into .deps/jazzy/nav2 (again only when the
#   archive changed), and the Debian runtime libraries it needs are installed with apt-get.
# The prefix found is written to .deps/DISTRO/nav2-prefix; when there is none, that file holds
# one line saying why (the Nav2 tests print it in the test summary).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
distro="$1"
deps="$root/.deps/$distro"
record="$deps/nav2-prefix"
archive="$(realpath -m "$root/../shared/nav2/nav2-jazzy-prefix.tar.xz")"
#: bookworm packages the packed prefix loads at run time (../shared/nav2/README.md).
runtime_packages=(libgraphicsmagick++-q16-12 libyaml-cpp0.7 libzmq5 libconsole-bridge1.0
                  libtinyxml2-9 liborocos-kdl1.5 libuuid1 libgomp1)
mkdir -p "$deps"
log() { printf '[setup] %s\n' "$*"; }
none() { printf 'none: %s\n' "$*" > "$record"; log "Nav2: $*"; exit 0; }

if [ -n "${WHEELSIM_NAV2_PREFIX:-}" ]; then
  prefix="$(cd "$WHEELSIM_NAV2_PREFIX" 2>/dev/null && pwd)" \
    || { log "error: WHEELSIM_NAV2_PREFIX=$WHEELSIM_NAV2_PREFIX is not a folder"; exit 2; }
  [ -d "$prefix/share/nav2_bringup" ] \
    || { log "error: WHEELSIM_NAV2_PREFIX=$prefix has no share/nav2_bringup (not a Nav2 prefix)"; exit 2; }
  printf '%s\n' "$prefix" > "$record"
  exit 0
fi
[ "$distro" = jazzy ] || none "no Nav2 build for $distro here (../shared/nav2 is Jazzy; set WHEELSIM_NAV2_PREFIX to use another)"
[ -f "$archive" ] || none "no ../shared/nav2/nav2-jazzy-prefix.tar.xz beside the project and no WHEELSIM_NAV2_PREFIX"

missing=()
for package in "${runtime_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo -n)
  log "Nav2: installing the Debian libraries it needs: ${missing[*]}"
  if ! "${sudo[@]}" apt-get install -y -q "${missing[@]}" >"$deps/nav2-apt.log" 2>&1; then
    "${sudo[@]}" apt-get update -q >>"$deps/nav2-apt.log" 2>&1 || true
    "${sudo[@]}" apt-get install -y -q "${missing[@]}" >>"$deps/nav2-apt.log" 2>&1 \
      || none "the Debian libraries it needs could not be installed (${missing[*]}; see $deps/nav2-apt.log)"
  fi
fi

stamp="$deps/nav2/archive.sha256"
sum="$(sha256sum "$archive" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$sum" ] || [ ! -d "$deps/nav2/install" ]; then
  log "Nav2: unpacking $archive into $deps/nav2 (first run only, a few seconds)"
  rm -rf "$deps/nav2" && mkdir -p "$deps/nav2"
  tar -xJf "$archive" -C "$deps/nav2"
  printf '%s\n' "$sum" > "$stamp"
fi
printf '%s\n' "$deps/nav2/install" > "$record"
