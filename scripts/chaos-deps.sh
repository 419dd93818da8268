#!/usr/bin/env bash
# Installs, idempotently and only when missing, the Debian tools the chaos harness needs
# (tools/chaos): iproute2 (ip netns, veth, bridge, tc netem), iptables (partitions),
# procps (ps/kill) and libfaketime (wall-clock step faults, BC-03).
# `--compose` also installs docker-compose (v1, Debian) to validate docker-compose.yml.
# Must run as root. Exits 0 when everything is present afterwards; runs `apt-get update` at most once.
set -euo pipefail

want_compose=0
for arg in "$@"; do
  case "$arg" in
    --compose) want_compose=1 ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "chaos-deps: unknown argument $arg" >&2; exit 2 ;;
  esac
done

if [ "$(id -u)" != "0" ]; then
  echo "chaos-deps: must run as root (network namespaces need it)" >&2
  exit 1
fi

missing=()
have_cmd() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ]; }
have_cmd ip || missing+=(iproute2)
have_cmd tc || missing+=(iproute2)
have_cmd iptables || missing+=(iptables)
have_cmd ps || missing+=(procps)
# libfaketime's preload library (path is multiarch; search rather than guess the triplet).
have_faketime=0
for lib in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1; do
  [ -e "$lib" ] && have_faketime=1
done
[ "$have_faketime" = 1 ] || missing+=(libfaketime)
if [ "$want_compose" = 1 ] && ! have_cmd docker-compose; then
  missing+=(docker-compose)
fi

if [ "${#missing[@]}" -eq 0 ]; then
  echo "chaos-deps: all present"
  exit 0
fi

# De-duplicate (iproute2 may be listed twice).
mapfile -t pkgs < <(printf '%s\n' "${missing[@]}" | sort -u)
echo "chaos-deps: installing ${pkgs[*]}"
export DEBIAN_FRONTEND=noninteractive
# Serialize concurrent callers (parallel test slices) on one lock.
exec 9>/tmp/tenure-chaos-deps.lock
flock 9
# Try with the package lists already on the machine; refresh them once only if that fails.
if ! apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
fi
echo "chaos-deps: installed ${pkgs[*]}"
