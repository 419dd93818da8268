#!/usr/bin/env bash
# Prepares a local container engine for Tenure's docker-compose files on a Debian machine without
# access to an image registry (run as root; idempotent):
#   1. installs Debian's docker.io, docker-compose and debootstrap when missing;
#   2. starts dockerd with --iptables=false --ip6tables=false (so it leaves the iptables rules of the
#      network-namespace chaos suite alone) unless an engine already answers;
#   3. builds the base image `tenure-base:local` when missing: a minimal Debian root filesystem
#      (debootstrap --variant=minbase) plus this machine's Node.js runtime and npm, imported with
#      `docker import`.
# The Dockerfile's base is a build argument (BASE_IMAGE, default node:20-slim); with a registry you
# need none of this. Usage: scripts/container-engine.sh [--check]   (--check: exit 0 iff ready)
set -euo pipefail

BASE_IMAGE=tenure-base:local
ROOTFS_IMAGE=tenure-rootfs:local
DOCKERD_LOG=/var/log/tenure-dockerd.log

say() { printf 'container-engine: %s\n' "$*" >&2; }

engine_up() { docker info >/dev/null 2>&1; }
have_base() { docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; }
have_rootfs() { docker image inspect "$ROOTFS_IMAGE" >/dev/null 2>&1; }

if [ "${1:-}" = "--check" ]; then
  engine_up && have_base && command -v docker-compose >/dev/null
  exit $?
fi

if [ "$(id -u)" -ne 0 ]; then say "must run as root"; exit 2; fi

install_packages() {
  local missing=()
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v docker-compose >/dev/null || missing+=(docker-compose)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]} from Debian's packages"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

start_engine() {
  engine_up && return 0
  say "starting dockerd (--iptables=false --ip6tables=false), log in $DOCKERD_LOG"
  nohup dockerd --iptables=false --ip6tables=false >"$DOCKERD_LOG" 2>&1 &
  for _ in $(seq 1 60); do engine_up && return 0; sleep 1; done
  say "dockerd did not answer within 60 s; last lines of $DOCKERD_LOG:"
  tail -20 "$DOCKERD_LOG" >&2
  exit 1
}

# The Debian mirror this machine's apt already uses (never a hard-coded host).
debian_mirror() {
  local uri
  uri=$(grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' |
    grep -v security | head -1 || true)
  [ -n "$uri" ] || uri=$(grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | head -1)
  [ -n "$uri" ] || { say "no Debian mirror configured for apt"; exit 1; }
  printf '%s\n' "$uri"
}

# A minimal Debian root filesystem with this machine's Node.js and npm, imported as an image.
build_rootfs() {
  have_rootfs && return 0
  local suite rootfs node_bin npm_dir
  suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
  rootfs=$(mktemp -d /tmp/tenure-rootfs.XXXXXX)
  say "building $ROOTFS_IMAGE: debootstrap --variant=minbase $suite (several minutes)"
  debootstrap --variant=minbase --include=ca-certificates,libstdc++6 "$suite" "$rootfs" \
    "$(debian_mirror)" >/tmp/tenure-debootstrap.log 2>&1 ||
    { tail -20 /tmp/tenure-debootstrap.log >&2; rm -rf "$rootfs"; exit 1; }
  node_bin=$(readlink -f "$(command -v node)")
  npm_dir=$(readlink -f "$(dirname "$(readlink -f "$(command -v npm)")")/..")
  install -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
  mkdir -p "$rootfs/usr/local/lib/node_modules"
  cp -a "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  chroot "$rootfs" /usr/sbin/useradd --create-home --uid 1000 node
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]' - "$ROOTFS_IMAGE" >/dev/null
  rm -rf "$rootfs"
}

# The base image: the root filesystem plus this machine's certificate store, so that npm inside an
# image build trusts what npm on this machine trusts (e.g. a proxy's certificate authority).
build_base() {
  have_base && return 0
  build_rootfs
  local ctx
  ctx=$(mktemp -d /tmp/tenure-base.XXXXXX)
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/ca-certificates.crt"
  cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM $ROOTFS_IMAGE
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \\
    NPM_CONFIG_CAFILE=/etc/ssl/certs/ca-certificates.crt
DOCKERFILE
  docker build -q -t "$BASE_IMAGE" "$ctx" >/dev/null
  rm -rf "$ctx"
  say "built $BASE_IMAGE ($(docker run --rm "$BASE_IMAGE" node --version))"
}

install_packages
start_engine
build_base
say "ready: docker $(docker version --format '{{.Server.Version}}'), base image $BASE_IMAGE"
