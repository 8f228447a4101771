#!/usr/bin/env bash
# Idempotent set-up of what only the tests need, run by scripts/test.sh after scripts/setup.sh (the
# demo never installs these): the images only the tests use (the data image and the egress proxy
# image), and meanwhile the remote-engine fronts, Podman and chromium (root on Debian only; elsewhere
# those tests say what is missing). scripts/test.sh runs it in the background while the checks and
# the unit project run; it also works alone.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { printf '[setup-tests] %s\n' "$*" >&2; }

# The data image (the tests of ask --data, the desk, the data files) and the egress proxy image (the
# restricted-network tests); scripts/setup.sh builds only the demo's codeaction/python:3.11. Node
# from scripts/setup.sh (.tools) when this runs on its own. The build needs nothing installed below
# and shares no lock with apt-get (mmdebstrap keeps the tree's own package database), so it runs in
# the background while the packages are installed; whatever happens below, this script waits for it
# before it exits.
[ -x "$ROOT/.tools/node/bin/node" ] && export PATH="$ROOT/.tools/node/bin:$PATH"
(cd "$ROOT" && node scripts/build-images.ts --flavour data --flavour proxy) </dev/null &
images_pid=$!
images_waited=""
trap '[ -n "$images_waited" ] || wait "$images_pid" || true' EXIT

# The tests put the local engine behind a TLS listener (stunnel4) and sshd on loopback ports. The
# desk's browser test drives Debian's chromium (playwright-core, never a downloaded browser). The
# ssh login is its own user in the docker group, since root's shell start-up may be slow on a
# developer machine. The Podman tests start `podman system service` themselves, as root and as that
# user (rootless: newuidmap from uidmap, and the user's subordinate ids). The test command lints the
# packages' Python with pyflakes (python3-pyflakes; scripts/check-python.ts).
if [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ]; then
  missing=""
  for tool in /usr/bin/stunnel4 /usr/sbin/sshd /usr/bin/podman /usr/bin/newuidmap /usr/bin/chromium; do [ -x "$tool" ] || missing=1; done
  /usr/bin/python3 -c "import pyflakes" 2>/dev/null || missing=1
  if [ -n "$missing" ]; then
    had_sshd=""
    [ -x /usr/sbin/sshd ] && had_sshd=1
    say "installing stunnel4, openssh-server, podman, uidmap, chromium and python3-pyflakes from Debian's packages"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stunnel4 openssh-server podman uidmap chromium python3-pyflakes >/dev/null
    # The tests start their own sshd on a loopback port: the machine-wide one a systemd machine
    # starts on installing the package is not wanted (one that was there before is left alone).
    if [ -z "$had_sshd" ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
      say "stopping and disabling the machine-wide ssh server the package started (the tests run their own)"
      systemctl disable --now ssh.service ssh.socket >/dev/null 2>&1 || true
    fi
  fi
  # Podman's crun refuses a hybrid cgroup host ("cgroups in hybrid mode not supported") when a
  # controller sits on the cgroup2 hierarchy beside the v1 ones. Installing or removing Debian's
  # docker.io (cgroupfs-mount) can leave one there (seen here with hugetlb): give each its v1 mount.
  unified=/sys/fs/cgroup/unified
  if [ -f "$unified/cgroup.controllers" ] && [ -d /sys/fs/cgroup/memory ]; then
    for controller in $(cat "$unified/cgroup.controllers"); do
      mountpoint -q "/sys/fs/cgroup/$controller" && continue
      say "mounting the $controller cgroup controller on its own v1 hierarchy (Podman on a hybrid host)"
      mkdir -p "/sys/fs/cgroup/$controller"
      mount -t cgroup -o "$controller" cgroup "/sys/fs/cgroup/$controller" ||
        say "could not mount $controller: the Podman tests will say crun refused a hybrid host"
    done
  fi
  if ! id codeaction-remote >/dev/null 2>&1; then
    say "creating the user codeaction-remote (the tests' ssh login to the engine)"
    useradd --create-home --shell /bin/bash codeaction-remote
  fi
  # "*": no password login, but not a locked account (sshd without PAM refuses locked ones, even with a key).
  usermod -p '*' codeaction-remote
  getent group docker >/dev/null && usermod -aG docker codeaction-remote
  # Subordinate ids for rootless Podman (useradd adds them only where /etc/subuid already exists).
  grep -q '^codeaction-remote:' /etc/subuid 2>/dev/null || usermod --add-subuids 100000-165535 codeaction-remote
  grep -q '^codeaction-remote:' /etc/subgid 2>/dev/null || usermod --add-subgids 100000-165535 codeaction-remote
fi

images_waited=1
if ! wait "$images_pid"; then
  say "building the data or the proxy image failed (its [image] lines above say why)"
  exit 1
fi
