#!/bin/sh
# What the egress proxy image adds to a Debian tree with squid installed (run in a chroot of the
# debootstrap tree before `docker import`). Changing this file changes the recipe version, so the
# image is rebuilt. The container's command (write the configuration, run squid, end with the
# manager) is given at creation: see packages/sandbox/src/network/egress-proxy.ts.
set -eu
# Squid runs as Debian's "proxy" user (uid/gid 13), not as the sandbox user (65534).
grep -q '^proxy:x:13:' /etc/passwd
# Defence in depth: no setuid or setgid programs (no-new-privileges already blocks them).
find / -xdev -type f -perm /6000 -exec chmod ug-s {} + 2>/dev/null || true
# The folder the tmpfs for squid's runtime files is mounted on.
mkdir -p /run/squid && chown 13:13 /run/squid
# Smaller image: package caches and documentation are of no use here.
rm -rf /var/cache/apt/* /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/* /usr/share/info/* 2>/dev/null || true
squid -v | head -1
