#!/bin/sh
# cgroup_enter.sh FILE CMD...: runs CMD (a node's slurmd) in the node's own cgroups, as the root
# of a cgroup namespace of its own, with /sys/fs/cgroup holding those hierarchies as seen from
# there. FILE (lab_cgroup_make in cgroups.sh) says "MOUNTPOINT CONTROLLERS DIR" per hierarchy.
# Runs inside the node's private mount namespace (up.sh's spawn), so the mounts stay the node's.
# Nothing forks: CMD keeps this process's pid, the one up.sh recorded.
set -eu
file=$1
shift
while read -r _ _ dir; do
    echo $$ >"$dir/cgroup.procs"
done <"$file"
# shellcheck disable=SC2016 # expanded by the inner sh
exec unshare --cgroup -- /bin/sh -c '
    set -eu
    file=$1
    shift
    mount -t tmpfs -o mode=0755,size=1m lab-cgroup /sys/fs/cgroup
    while read -r mnt ctl dir; do
        mkdir -p "$mnt"
        mount -t cgroup -o "$ctl" cgroup "$mnt"
    done <"$file"
    exec "$@"' cgroup-enter "$file" "$@"
