#!/usr/bin/env bash
# Runs a Slurm client command (srun, sbatch, salloc, sinfo, scontrol, squeue,
# ...) against the lab, passing stdin, stdout, stderr and the exit status
# straight through:
#   run.sh CMD ARGS...            in the controller's network namespace only
#                                 (the caller's files, mounts and cwd as is)
#   run.sh --node NODE CMD ARGS...  inside node NODE (n1, n2, ... or ctl):
#                                 its network, hostname and private /etc/hosts
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lab-env.sh
. "$HERE/lab-env.sh"

usage() {
    echo "usage: $0 [--node NODE] CMD [ARGS...]" >&2
    exit 2
}

node=
case ${1:-} in
--node)
    (($# >= 2)) || usage
    node=$2
    shift 2
    ;;
--node=*)
    node=${1#--node=}
    shift
    ;;
-h | --help) usage ;;
esac
(($# >= 1)) || usage

[[ -e $LAB_NETNS_DIR/$LAB_CTL_NETNS && -r $SLURM_CONF ]] ||
    lab_die "the lab is not up (run tests/cluster/up.sh)"

# LAB_CLIENT_ENV="K=V ...": added to the environment of the Slurm clients that load SPANK
# plugins (srun, sbatch, salloc) only, not of run.sh's other commands: the sanitizer test
# preloads libasan into them this way.
client_env=()
case ${1##*/} in
srun | sbatch | salloc) read -r -a client_env <<<"${LAB_CLIENT_ENV:-}" ;;
esac

if [[ -z $node ]]; then
    exec nsenter --net="$LAB_NETNS_DIR/$LAB_CTL_NETNS" -- env SLURM_CONF="$SLURM_CONF" "${client_env[@]}" "$@"
fi

# A node's UTS and mount namespaces exist only as long as a process holds
# them: enter those of the node's slurmd (slurmctld's for ctl). --wd keeps the
# caller's cwd: the mount namespace is a copy, so the same paths exist there.
# --root takes the daemon's root too: in a chroot (tests/platform) entering the
# mount namespace alone would land at the namespace's real / instead.
if [[ $node == "$LAB_CTL_NAME" ]]; then
    holder=slurmctld
else
    holder=slurmd-$node
fi
pid=$(lab_pid_of "$holder") || lab_die "no running $holder in the lab (node '$node')"
exec nsenter --target="$pid" --net --uts --mount --root --wd="$PWD" -- env SLURM_CONF="$SLURM_CONF" "${client_env[@]}" "$@"
