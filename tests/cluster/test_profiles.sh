#!/bin/bash
# Cluster profiles on the real cluster: the shipped profiles load inside slurmstepd; an Ethernet
# profile with per-node interfaces gives each node its own NCCL_SOCKET_IFNAME; unknown names and
# user files (where the site forbids them) fail the step with the list of available profiles.
source "$(dirname "$0")/testlib.sh"
source "$TESTS_DIR/lab-env.sh"

mkdir -p "$WORK/profiles"
cp "${DDP_TEST_PROFILE_DIR:-$TESTS_DIR/../../configs/profiles}/"*.yaml "$WORK/profiles/"
# The shipped Ethernet profile, adapted to the lab's node names: n2's interface has another name.
cat >"$WORK/profiles/lab-ethernet.yaml" <<'YAML'
name: lab-ethernet
description: the test cluster, with per-node interface names as on the 6-node Ethernet setup
extends: ethernet
nodes:
  - {match: "n1", network: {socket_interfaces: [eth0]}}
  - {match: "n2", network: {socket_interfaces: [ens1f0np0, eth0]}}
YAML
chmod -R a+rX "$WORK/profiles"

# n2 gets a second interface named as on the real setup, inside its own namespace only.
ns2=$LAB_NETNS_DIR/${LAB_NETNS_PREFIX}-n2
# (a veth pair with both ends in n2: no dummy module needed, and no route out of the namespace)
nsenter --net="$ns2" ip link add ens1f0np0 type veth peer name ens1f0peer
nsenter --net="$ns2" ip addr add 10.77.1.12/24 dev ens1f0np0
nsenter --net="$ns2" ip link set ens1f0peer up
nsenter --net="$ns2" ip link set ens1f0np0 up
restore() {
  nsenter --net="$ns2" ip link del ens1f0np0 2>/dev/null || true
  "$TESTS_DIR/up.sh" >/dev/null 2>&1 || true
}
trap 'restore; rm -rf "$WORK"' EXIT
DDP_SPANK_ARGS="${DDP_SPANK_ARGS:+$DDP_SPANK_ARGS }profile_dir=$WORK/profiles" "$TESTS_DIR/up.sh" >/dev/null 2>&1 || fail "lab restart"

show='echo "prof host=$(hostname) DDP_PROFILE=$DDP_PROFILE NCCL_SOCKET_IFNAME=$NCCL_SOCKET_IFNAME GLOO_SOCKET_IFNAME=$GLOO_SOCKET_IFNAME NCCL_IB_DISABLE=${NCCL_IB_DISABLE-unset} NCCL_NET=${NCCL_NET-unset} NCCL_PROTO=${NCCL_PROTO-unset}"'
out=$(timeout 60 "$RUN" srun --ddp-profile=lab-ethernet -N2 -n2 bash -c "$show" 2>&1) || fail "srun: $out"
echo "$out"
grep -q '^prof host=n1 DDP_PROFILE=lab-ethernet NCCL_SOCKET_IFNAME==eth0 GLOO_SOCKET_IFNAME=eth0 NCCL_IB_DISABLE=1' <<<"$out" ||
  fail "n1 did not get its interface eth0"
grep -q '^prof host=n2 DDP_PROFILE=lab-ethernet NCCL_SOCKET_IFNAME==ens1f0np0 GLOO_SOCKET_IFNAME=ens1f0np0 NCCL_IB_DISABLE=1' <<<"$out" ||
  fail "n2 did not get its own interface ens1f0np0"

# A profile variable the user set in the job's environment keeps the user's value; a forced one
# (Olivia's NCCL_PROTO) does not.
out=$(NCCL_NET=Socket NCCL_PROTO=LL128 timeout 60 "$RUN" srun --ddp-profile=olivia -N1 -n1 bash -c "$show" 2>&1) ||
  fail "srun olivia: $out"
expect_contains "$out" "DDP_PROFILE=olivia" "olivia profile"
expect_contains "$out" "NCCL_NET=Socket NCCL_PROTO=^LL128" "user value wins unless forced"

out=$(run_expect_failure "unknown profile" "$RUN" srun --ddp-profile=nosuch -N1 -n1 true)
expect_contains "$out" "nosuch" "unknown profile named"
expect_contains "$out" "ethernet" "available profiles listed"
out=$(run_expect_failure "user file" "$RUN" srun --ddp-profile="$WORK/profiles/vega.yaml" -N1 -n1 true)
expect_contains "$out" "user_profiles=no" "user files refused"
"$RUN" srun -N2 -n2 true || fail "the cluster no longer runs steps"
echo "PASS: per-node interfaces from a profile, precedence, and refusals"
