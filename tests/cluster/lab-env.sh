# shellcheck shell=bash
# Shared settings and helpers of the test cluster ("the lab"); sourced by
# up.sh, down.sh and run.sh, and usable by test drivers that want the paths.
# Sets no shell options itself: the sourcing script owns those.
# shellcheck disable=SC2034 # the variables are for the sourcing scripts

LAB_DIR=${LAB_DIR:-/run/ddp-lab}
LAB_NODES=${LAB_NODES:-2}

# Everything the lab does on the network stays inside this /24 and inside
# namespaces created for it; nothing is configured in the root namespace.
LAB_NET=10.77.0
LAB_PREFIXLEN=24
LAB_CTL_NAME=ctl
LAB_CTL_ADDR=$LAB_NET.1
LAB_NETNS_PREFIX=ddplab
LAB_CTL_NETNS=$LAB_NETNS_PREFIX-ctl
LAB_BRIDGE=br0
LAB_NETNS_DIR=/run/netns

SLURM_CONF=$LAB_DIR/slurm.conf
export SLURM_CONF

# The Slurm the lab runs: the system's (Debian's packages), or one under a prefix of its own as a
# site builds it (tests/platform/slurm_source.sh builds SchedMD's 25.11 so). Its daemons and
# clients then come first on every PATH the lab and its tests use, and nothing else points at it:
# what finds libslurm must find it as on such a site.
LAB_SLURM_PREFIX=${LAB_SLURM_PREFIX:-}
LAB_DAEMON_PATH=/usr/sbin:/usr/bin:/sbin:/bin
if [[ -n $LAB_SLURM_PREFIX ]]; then
    LAB_DAEMON_PATH=$LAB_SLURM_PREFIX/sbin:$LAB_SLURM_PREFIX/bin:$LAB_DAEMON_PATH
    PATH=$LAB_SLURM_PREFIX/bin:$LAB_SLURM_PREFIX/sbin:$PATH
    export PATH
fi
# The controller's and the clients' munged; each node's has a folder of its own under munge-nodes/
# (up.sh), bound over this one in the node's mount namespace.
LAB_MUNGE_DIR=$LAB_DIR/munge
LAB_MUNGE_SOCKET=$LAB_MUNGE_DIR/munge.sock
LAB_PLUGSTACK=$LAB_DIR/plugstack.conf
LAB_PLUGSTACK_DIR=$LAB_DIR/plugstack.conf.d
LAB_PID_DIR=$LAB_DIR/pids
LAB_LOG_DIR=$LAB_DIR/log
# Book-keeping of what up.sh created, so down.sh undoes exactly that even if
# the environment (LAB_NODES, ...) changed in between.
LAB_STATE_DIR=$LAB_DIR/lab

# shellcheck source-path=SCRIPTDIR source=cgroups.sh
. "$(dirname "${BASH_SOURCE[0]}")/cgroups.sh"

lab_die() {
    echo "lab: $*" >&2
    exit 1
}

lab_log() {
    echo "lab: $*" >&2
}

lab_require_root() {
    [[ $(id -u) -eq 0 ]] || lab_die "must run as root (namespaces, mknod, daemons)"
}

# A typo such as LAB_DIR=/ must never reach the rm -rf calls in teardown.
lab_check_dir() {
    [[ $LAB_DIR == /* ]] || lab_die "LAB_DIR must be absolute: $LAB_DIR"
    [[ $LAB_DIR != / && $LAB_DIR != *..* ]] || lab_die "refusing LAB_DIR=$LAB_DIR"
}

lab_check_nodes() {
    if ! [[ $LAB_NODES =~ ^[0-9]+$ ]] || ((LAB_NODES < 1 || LAB_NODES > 200)); then
        lab_die "LAB_NODES must be 1..200, got '$LAB_NODES'"
    fi
}

# Node names and addresses wanted now (from LAB_NODES).
lab_node_names() {
    local k
    for ((k = 1; k <= LAB_NODES; k++)); do
        echo "n$k"
    done
}

lab_node_addr() {
    echo "$LAB_NET.$((10 + ${1#n}))"
}

lab_node_netns() {
    echo "$LAB_NETNS_PREFIX-$1"
}

lab_node_hostlist() {
    if ((LAB_NODES == 1)); then echo n1; else echo "n[1-$LAB_NODES]"; fi
}

# Runs a command as a Slurm client: controller's network namespace only, so the
# caller's mounts and cwd stay as they are.
lab_client() {
    nsenter --net="$LAB_NETNS_DIR/$LAB_CTL_NETNS" -- env SLURM_CONF="$SLURM_CONF" "$@"
}

# ---------------------------------------------------------------- processes --

# Prints "state ppid starttime" of a pid, or fails if it is gone. The comm
# field may contain spaces and parentheses, hence the cut at the last ") ".
lab_proc_stat() {
    local s f
    { s=$(<"/proc/$1/stat"); } 2>/dev/null || return 1
    s=${s##*) }
    read -r -a f <<<"$s"
    echo "${f[0]} ${f[1]} ${f[19]}"
}

lab_proc_starttime() {
    local st
    st=$(lab_proc_stat "$1") || return 1
    echo "${st##* }"
}

# True if the recorded daemon NAME is still the very process we started: the
# start time guards against the pid having been reused by something else.
lab_pid_alive() {
    local name=$1 pid stime st
    [[ -r $LAB_PID_DIR/$name.pid && -r $LAB_PID_DIR/$name.stime ]] || return 1
    pid=$(<"$LAB_PID_DIR/$name.pid")
    stime=$(<"$LAB_PID_DIR/$name.stime")
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    st=$(lab_proc_stat "$pid") || return 1
    [[ ${st%% *} != Z && ${st##* } == "$stime" ]]
}

lab_pid_of() {
    lab_pid_alive "$1" || return 1
    cat "$LAB_PID_DIR/$1.pid"
}

# Our own pid and all its ancestors: never signalled, even when this script
# itself runs inside a lab namespace (e.g. through run.sh).
lab_self_and_ancestors() {
    local p=$BASHPID st
    while [[ $p =~ ^[0-9]+$ ]] && ((p > 1)); do
        echo "$p"
        st=$(lab_proc_stat "$p") || break
        p=${st#* }
        p=${p%% *}
    done
}

# Waits until none of the given pids is alive (zombies count as dead, since
# a daemon started by this very shell stays a zombie until reaped).
lab_wait_gone() {
    local timeout_ds=$1 pid st alive i
    shift
    for ((i = 0; i < timeout_ds; i++)); do
        alive=0
        for pid in "$@"; do
            st=$(lab_proc_stat "$pid") || continue
            [[ ${st%% *} == Z ]] || alive=1
        done
        ((alive)) || return 0
        sleep 0.1
    done
    return 1
}

# SIGTERM, then SIGKILL after a grace period, for an explicit list of pids.
lab_stop_pids() {
    local grace_ds=$1 pid
    shift
    (($# > 0)) || return 0
    kill -TERM "$@" 2>/dev/null || true
    if ! lab_wait_gone "$grace_ds" "$@"; then
        for pid in "$@"; do
            kill -KILL "$pid" 2>/dev/null || true
        done
        lab_wait_gone 50 "$@" || lab_log "warning: some of pids $* survived SIGKILL"
    fi
    # Reap those that are our own children so they do not linger as zombies.
    for pid in "$@"; do
        wait "$pid" 2>/dev/null || true
    done
}

# Stops one recorded daemon and forgets it.
lab_stop_daemon() {
    local name=$1 pid
    if pid=$(lab_pid_of "$name"); then
        lab_stop_pids 50 "$pid"
    fi
    rm -f "$LAB_PID_DIR/$name.pid" "$LAB_PID_DIR/$name.stime"
}

# Namespace ids ("net:[N]", "mnt:[N]") that belong to the lab: the named
# network namespaces it created, the mount namespaces of its live daemons, and
# whatever up.sh recorded. The caller's own and init's namespaces are removed
# from the set, so a mishap (say a daemon that never unshared) can never make
# us signal processes of the host.
lab_namespace_ids() {
    local ns name pid
    {
        if [[ -r $LAB_STATE_DIR/netns ]]; then
            while read -r ns; do
                [[ -n $ns && -e $LAB_NETNS_DIR/$ns ]] || continue
                echo "net:[$(stat -L -c %i "$LAB_NETNS_DIR/$ns")]"
            done <"$LAB_STATE_DIR/netns"
        fi
        for pid in "$LAB_PID_DIR"/*.pid; do
            [[ -e $pid ]] || continue
            name=$(basename "$pid" .pid)
            pid=$(lab_pid_of "$name") || continue
            readlink "/proc/$pid/ns/mnt" "/proc/$pid/ns/net" 2>/dev/null || true
        done
        [[ -r $LAB_STATE_DIR/nsids ]] && cat "$LAB_STATE_DIR/nsids"
    } | sort -u | grep -v -x -F \
        -e "$(readlink /proc/self/ns/net)" -e "$(readlink /proc/self/ns/mnt)" \
        -e "$(readlink /proc/1/ns/net)" -e "$(readlink /proc/1/ns/mnt)" || true
}

# Pids of every process that lives in a lab namespace, plus all descendants of
# those and of the recorded daemons (job steps double-fork away from slurmd,
# so the namespaces are what ties them to the lab). Excludes this shell and
# its ancestors.
lab_member_pids() {
    local ids roots f
    ids=$(lab_namespace_ids)
    roots=$(
        for f in "$LAB_PID_DIR"/*.pid; do
            [[ -e $f ]] || continue
            lab_pid_of "$(basename "$f" .pid)" || true
        done
        if [[ -n $ids ]]; then
            # One find for all of /proc instead of a readlink per process;
            # processes vanishing meanwhile make find fail, which is fine.
            { find /proc/[0-9]*/ns -maxdepth 1 \( -name net -o -name mnt \) \
                -printf '%h %l\n' 2>/dev/null || true; } |
                awk -v ids="$ids" 'BEGIN { n = split(ids, a, "\n"); for (i = 1; i <= n; i++) want[a[i]] = 1 }
                    want[$2] { split($1, p, "/"); print p[3] }'
        fi
    )
    [[ -n $roots ]] || return 0
    ps -e -o pid=,ppid= | awk -v roots="$roots" -v skip="$(lab_self_and_ancestors)" '
        BEGIN { n = split(roots, r, "\n"); for (i = 1; i <= n; i++) in_set[r[i]] = 1
                n = split(skip, s, "\n"); for (i = 1; i <= n; i++) no[s[i]] = 1 }
        { parent[$1] = $2 }
        END {
            do { grew = 0
                 for (p in parent) if (!(p in in_set) && (parent[p] in in_set)) { in_set[p] = 1; grew = 1 }
            } while (grew)
            for (p in in_set) if (p != "" && (p in parent) && !(p in no)) print p
        }'
}

# ------------------------------------------------------------------ teardown --

# Undoes everything a (possibly partial) up.sh did. Safe to call repeatedly.
lab_teardown() {
    local pids ns daemons=() members=() munged=() skip=() f name pid

    # Daemons first: slurmctld and slurmd stop accepting work, munged last so
    # that the slurm daemons can still authenticate while shutting down.
    for f in "$LAB_PID_DIR"/slurm*.pid; do
        [[ -e $f ]] || continue
        name=$(basename "$f" .pid)
        pid=$(lab_pid_of "$name") && daemons+=("$pid")
    done
    # Members must be collected while the daemons (and their namespaces) live.
    pids=$(lab_member_pids)
    lab_cgroup_thaw
    if ((${#daemons[@]})); then
        lab_stop_pids 50 "${daemons[@]}"
    fi
    # Job steps, tasks, stray clients started through run.sh. slurmstepd and
    # its tasks shrug off SIGTERM, and nobody needs their goodbyes here.
    # The controller's munged and each node's (up.sh), stopped last.
    for f in "$LAB_PID_DIR"/munged*.pid; do
        [[ -e $f ]] || continue
        munged+=("$(basename "$f" .pid)")
        pid=$(lab_pid_of "${munged[-1]}") && skip+=(-e "$pid")
    done
    mapfile -t members < <(echo "$pids" | grep -v -x -F "${skip[@]}" -e '')
    lab_stop_pids 5 "${members[@]}"
    for name in "${munged[@]}"; do lab_stop_daemon "$name"; done
    # Anything that slipped in meanwhile (e.g. a step launched during shutdown).
    mapfile -t members < <(lab_member_pids)
    lab_stop_pids 5 "${members[@]}"

    if [[ -r $LAB_STATE_DIR/netns ]]; then
        while read -r ns; do
            [[ -n $ns && -e $LAB_NETNS_DIR/$ns ]] || continue
            ip netns delete "$ns" || lab_log "warning: could not delete netns $ns"
        done <"$LAB_STATE_DIR/netns"
    fi
    # `ip netns add` turns /run/netns into a bind mount of itself; undo that
    # only if we caused it and nobody else has namespaces there now.
    if [[ -e $LAB_STATE_DIR/netns-dir-mounted ]] && mountpoint -q "$LAB_NETNS_DIR" &&
        [[ -z $(ls -A "$LAB_NETNS_DIR") ]]; then
        umount "$LAB_NETNS_DIR" || lab_log "warning: could not unmount $LAB_NETNS_DIR"
    fi
    if [[ -e $LAB_STATE_DIR/netns-dir-created ]] && ! mountpoint -q "$LAB_NETNS_DIR"; then
        rmdir "$LAB_NETNS_DIR" 2>/dev/null || true
    fi

    lab_cgroup_remove
    # Keep log/ for post-mortems; the rest is recreated by up.sh.
    rm -rf "$LAB_PID_DIR" "$LAB_STATE_DIR" "${LAB_DIR:?}/state" "${LAB_DIR:?}/spool" \
        "${LAB_DIR:?}/run" "${LAB_DIR:?}/dev" "${LAB_MUNGE_DIR:?}" "${LAB_DIR:?}/munge-nodes" \
        "${LAB_DIR:?}/munge-key" "$LAB_PLUGSTACK_DIR" "${LAB_DIR:?}/node-facts"
    rm -f "$SLURM_CONF" "$LAB_DIR/gres.conf" "$LAB_DIR/cgroup.conf" "$LAB_PLUGSTACK" "$LAB_DIR/cli_filter.lua" \
        "$LAB_DIR/hosts"
}

# Serialises up.sh and down.sh on fd 9. That fd must never leak into daemons
# (they would hold the lock forever), so spawning closes it explicitly.
lab_lock() {
    # A directory we create gets 0755 (munged insists that no one else can
    # write there); an existing one is left as it is.
    if [[ ! -d $LAB_DIR ]]; then
        mkdir -p "$LAB_DIR"
        chmod 0755 "$LAB_DIR"
    fi
    exec 9>"$LAB_DIR/.lock"
    flock -w 120 9 || lab_die "another up.sh/down.sh holds $LAB_DIR/.lock"
}
