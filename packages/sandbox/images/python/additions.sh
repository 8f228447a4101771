#!/bin/sh
# What the sandbox image adds to a Python base, on both build paths (the Dockerfile
# runs it in a RUN step; the offline path runs it in a chroot of the debootstrap tree).
# Changing this file changes the recipe version, so images are rebuilt.
set -eu
# The sandbox user: uid/gid 65534 ("nobody"/"nogroup" on Debian). Create it if the base lacks it.
grep -q '^[^:]*:x:65534:' /etc/group || echo 'nogroup:x:65534:' >> /etc/group
grep -q '^[^:]*:x:65534:' /etc/passwd || echo 'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin' >> /etc/passwd
# Defence in depth: no setuid or setgid programs (no-new-privileges already blocks them).
find / -xdev -type f -perm /6000 -exec chmod ug-s {} + 2>/dev/null || true
# installPackage puts packages in /workspace/.packages with pip --target; Debian's marker that
# the system Python is managed by apt only concerns the (read-only) system site-packages.
rm -f /usr/lib/python3*/EXTERNALLY-MANAGED
# Mount points for the tmpfs folders, owned by the sandbox user.
mkdir -p /workspace && chown 65534:65534 /workspace && chmod 0700 /workspace
# Smaller image: package caches and documentation are of no use in a sandbox.
rm -rf /var/cache/apt/* /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/* /usr/share/info/* 2>/dev/null || true
python3 -c 'import sys; assert sys.version_info >= (3, 9), sys.version'
