# shellcheck shell=bash
# The lab's cgroup-confined variant (LAB_CGROUP=1): slurm.conf with proctrack/cgroup and
# task/cgroup, each node's slurmd in cgroups of its own, below the cgroups of the process that ran
# up.sh, and in a cgroup namespace whose root they are. Inside a node, /sys/fs/cgroup holds those
# hierarchies again, mounted from that namespace: every cgroup Slurm makes lands below the node's,
# and nothing is written above the test's own. Sourced by lab-env.sh.
#
# Only cgroup v1 hierarchies are used (what these machines mount; Slurm 22.05 to 25.11 run
# cgroup/v1). On a machine with cgroup v2 alone, lab_cgroup_unusable says so.

LAB_CGROUP=${LAB_CGROUP:-0}
# The lab's nodes are cgroup-confined (up.sh), or are to be.
lab_confined() { [[ $LAB_CGROUP == 1 ]]; }
# What a node's slurmd joins, one line per hierarchy: MOUNTPOINT CONTROLLERS DIR (DIR on the host).
lab_cgroup_file() { echo "$LAB_STATE_DIR/cgroup.$1"; }

# The cgroup v1 hierarchies that hold controllers, as "MOUNTPOINT CONTROLLERS" from this process's
# view (named ones such as name=systemd hold none and are left out).
lab_cgroup_hierarchies() {
    awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) != "cgroup") next
           n = split($(i + 3), o, ","); c = ""
           for (k = 1; k <= n; k++)
               if (o[k] !~ /^(rw|ro|noprefix|clone_children|xattr|cpuset_v2_mode|name=.*|release_agent=.*)$/)
                   c = c (c == "" ? "" : ",") o[k]
           if (c != "" && $4 == "/") print $5, c }' /proc/self/mountinfo
}

# Prints why the variant cannot run here and fails, or says nothing.
lab_cgroup_unusable() {
    local need found line
    found=$(lab_cgroup_hierarchies)
    for need in freezer cpuset devices; do
        grep -qE "[ ,]$need(,|$)" <<<"$found" || {
            if [[ $(stat -f -c %T /sys/fs/cgroup 2>/dev/null) == cgroup2fs ]]; then
                echo "this machine mounts cgroup v2 alone; the lab's cgroup variant needs the v1 $need hierarchy"
            else
                echo "no cgroup v1 $need hierarchy is mounted (see /proc/self/mountinfo)"
            fi
            return 0
        }
    done
    while read -r line; do
        [[ -w ${line%% *} ]] || { echo "cannot write to ${line%% *}"; return 0; }
    done <<<"$found"
    return 1
}

# This process's cgroup in the hierarchy of CONTROLLERS (as /proc/self/cgroup names it).
lab_cgroup_own() {
    awk -F: -v c="$1" '$2 == c { print $3; exit }' /proc/self/cgroup
}

# Makes NODE's cgroups (DIR/ddplab/NODE in each hierarchy, DIR this process's own) and writes the
# file its slurmd joins them from. A cpuset child starts with no CPUs: it takes its parent's.
lab_cgroup_make() {
    local node=$1 mnt ctl own dir sub f
    : >"$(lab_cgroup_file "$node")"
    while read -r mnt ctl; do
        own=$(lab_cgroup_own "$ctl")
        [[ -n $own ]] || lab_die "no cgroup of this process in the $ctl hierarchy (/proc/self/cgroup)"
        dir=$mnt${own%/}
        for sub in ddplab "ddplab/$node"; do
            # One left behind by a lab that was not torn down is taken over, and removed with ours.
            [[ -d $dir/$sub ]] || mkdir "$dir/$sub"
            grep -qxF "$dir/$sub" "$LAB_STATE_DIR/cgroups" 2>/dev/null || echo "$dir/$sub" >>"$LAB_STATE_DIR/cgroups"
            if [[ -e $dir/$sub/cpuset.cpus ]]; then
                for f in cpuset.cpus cpuset.mems; do cat "$(dirname "$dir/$sub")/$f" >"$dir/$sub/$f"; done
            fi
        done
        echo "$mnt $ctl $dir/ddplab/$node" >>"$(lab_cgroup_file "$node")"
    done < <(lab_cgroup_hierarchies)
}

# The CPUs a node may advertise: those of this process's cpuset.
lab_cgroup_cpus() {
    local mnt
    mnt=$(lab_cgroup_hierarchies | awk '$2 ~ /(^|,)cpuset(,|$)/ { print $1; exit }')
    awk -F, '{ for (i = 1; i <= NF; i++) { n = split($i, r, "-"); t += (n == 2 ? r[2] - r[1] + 1 : 1) } print t }' \
        "$mnt$(lab_cgroup_own cpuset)/cpuset.cpus"
}

# The top of each hierarchy's lab tree: the recorded cgroups whose parent is not recorded.
lab_cgroup_tops() {
    [[ -r $LAB_STATE_DIR/cgroups ]] || return 0
    awk '{ seen[$0] = 1; order[NR] = $0 }
         END { for (i = 1; i <= NR; i++) { p = order[i]; sub("/[^/]*$", "", p); if (!(p in seen)) print order[i] } }' \
        "$LAB_STATE_DIR/cgroups"
}

# A suspended job's tasks sit frozen, where no signal reaches them: thaw every freezer cgroup of
# the lab, parents first, before its processes are stopped.
lab_cgroup_thaw() {
    local top
    while read -r top; do
        [[ -e $top/freezer.state ]] || continue
        find "$top" -name freezer.state -exec sh -c 'for f; do echo THAWED >"$f"; done' sh {} + 2>/dev/null || true
    done < <(lab_cgroup_tops)
}

# Removes the cgroups up.sh made and whatever Slurm left below them, deepest first; the lab's
# processes are gone by now.
lab_cgroup_remove() {
    local top
    while read -r top; do
        [[ -d $top ]] || continue
        find "$top" -depth -type d -exec rmdir {} + 2>/dev/null ||
            lab_log "warning: could not remove every cgroup below $top"
    done < <(lab_cgroup_tops)
}
