#!/usr/bin/env bash
# Runs a command where only the programs a fresh minimal Debian 12 has once
# scripts/install-deps.sh ran can be found: those of the required and essential
# packages, and of the packages install-deps.sh installs with everything they depend on.
# scripts/test.sh runs the tests and the package step through it, so that a tool they call
# and install-deps.sh does not install (CPack calls `file`) fails on every machine, not
# only on a fresh one.
#
# As root, in a mount namespace of its own, /usr/bin and /usr/sbin hold only those
# programs (CMake's find_program looks there whatever PATH says); otherwise PATH alone is
# restricted, which catches what is found through PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }

allowed=$(mktemp)
trap 'rm -f "$allowed"' EXIT
export T2P_ALLOWED=$allowed
mapfile -t listed < <(scripts/install-deps.sh --list)
{
  apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "${listed[@]}" 2>/dev/null | grep -v '^[ <]' || true
  dpkg-query -W -f='${Package} ${Priority} ${Essential}\n' | awk '$2 == "required" || $3 == "yes" {print $1}'
} | sort -u | while read -r pkg; do
  dpkg -L "$pkg" 2>/dev/null | grep -E '^(/usr)?/s?bin/[^/]+$' || true
done | sed -E 's#^/(s?bin)/#/usr/\1/#' | sort -u >"$allowed"

# The programs of `dir` that may run: listed, or a link leading to one through any of its
# hops (alternatives: c++ -> /etc/alternatives/c++ -> /usr/bin/g++, of package g++ ->
# g++-12 -> x86_64-linux-gnu-g++-12). Both ways below use this one rule, so the overlay
# on a used machine and PATH on a fresh one (a chroot, where there is no overlay) agree.
allowed_in() {
  local dir=$1 name p hop
  declare -A ok=()
  while read -r p; do ok[$p]=1; done <"$T2P_ALLOWED"
  for name in $(ls "$dir"); do
    p=$dir/$name
    for _ in 1 2 3 4 5 6 7 8; do
      if [ -n "${ok[$p]:-}" ]; then echo "$name"; break; fi
      [ -L "$p" ] || break
      hop=$(readlink "$p")
      case $hop in /*) p=$hop ;; *) p=$(dirname "$p")/$hop ;; esac
      p=$(realpath -sm "$p" | sed -E 's#^/(s?bin)/#/usr/\1/#')
    done
  done
}

# Writes into `up` a whiteout (an overlay's mark of a removed file) for every program of
# `dir` that allowed_in leaves out.
hide_others() {
  local dir=$1 up=$2 name
  declare -A keep=()
  while read -r name; do keep[$name]=1; done < <(allowed_in "$dir")
  for name in $(ls "$dir"); do
    [ -n "${keep[$name]:-}" ] || mknod "$up/$name" c 0 0
  done
}

# As root: /usr/bin and /usr/sbin, in a mount namespace of this command's, seen through an
# overlay that hides the others (programs keep their paths, so they still find their own
# files beside them).
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
  export -f allowed_in hide_others
  if unshare -m bash ${T2P_TRACE:+-x} -c '
    set -euo pipefail
    work=$(mktemp -d)
    for d in bin sbin; do
      mkdir -p "$work/up-$d" "$work/work-$d"
      hide_others "/usr/$d" "$work/up-$d"
    done
    for d in bin sbin; do
      mount -t overlay overlay -o "lowerdir=/usr/$d,upperdir=$work/up-$d,workdir=$work/work-$d" "/usr/$d" || exit 99
    done
    PATH=/usr/bin:/usr/sbin "$@"' bash "$@"; then
    exit 0
  else
    status=$?
    [ "$status" -eq 99 ] || exit "$status"  # 99: no overlay here; PATH alone below
  fi
fi

# Elsewhere: PATH holds links to the allowed programs and nothing else.
bin=$(mktemp -d)
trap 'rm -rf "$bin" "$allowed"' EXIT
for d in /usr/bin /usr/sbin; do
  while read -r name; do
    [ -e "$bin/$name" ] || ln -s "$d/$name" "$bin/$name"
  done < <(allowed_in "$d")
done
PATH="$bin" "$@"
