#!/bin/bash
# Runs a command inside a platform root, in the private mount and UTS namespace that run.sh made
# (unshare --mount --uts): fresh /run and /tmp (so /run/netns and /run/munge are the root's own),
# /proc, /sys and /dev of this machine, apt's package folder shared by the roots of one release,
# and the root bind-mounted onto itself, because `ip netns` remounts / as a slave and that fails
# on a plain chroot directory.
#   enter.sh ROOT DEBS COMMAND
set -euo pipefail
root=$1
debs=$2
cmd=$3
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --make-rslave "$root/sys"
mount --rbind /dev "$root/dev"
mount --make-rslave "$root/dev"
mount -t tmpfs -o mode=0755 tmpfs "$root/run"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
mount --bind "$debs" "$root/var/cache/apt/archives"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
# Slurm 24.11 resolves the submitting host by name to answer it; the test cluster's clients run in
# its controller's network namespace, whose name (ctl) its hosts file knows.
hostname ctl
exec chroot "$root" /usr/bin/env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 CI="${CI:-}" \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash -c "cd /src && $cmd"
