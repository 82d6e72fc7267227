#!/bin/bash
# Another user of the cluster (Debian's `daemon`) against an unprivileged user's job (`nobody`),
# with nothing but what any user has: the job's public id, the project's code, a TCP client, a
# UDP socket. They write a forged failed check into the rendezvous store of a
# --ddp-preflight step of a --ddp-retries job, from the moment it listens; they hold UDP
# MASTER_PORT on the head node, where the failure watch used to listen, while a rank of the
# victim's step is killed. The victim's step ends naming tampering (or runs, should every forged
# entry be overwritten before it is read); nothing is requeued
# or excluded on forged data; the watch still names the killed rank; the attacker receives none of
# the watch's datagrams; the nodes end idle and no slurmstepd is left.
source "$(dirname "$0")/testlib.sh"
PREFLIGHT=${DDP_PREFLIGHT_BIN:-}
WORKER=${DDP_TEST_WORKER_BIN:-}
PLAN=${DDP_PLAN_BIN:-}
[ -x "$PREFLIGHT" ] && [ -x "$WORKER" ] && [ -x "$PLAN" ] || { echo "SKIP: ddp-preflight, the test worker or ddp-plan not built"; exit 77; }
"$PYTHON" -c "import torch.distributed" 2>/dev/null || { echo "SKIP: python3-torch missing"; exit 77; }
id nobody >/dev/null 2>&1 && id "$ATTACKER" >/dev/null 2>&1 || { echo "SKIP: no user nobody or $ATTACKER"; exit 77; }

chown nobody:"$(id -gn nobody)" "$WORK"
victim() { (cd "$WORK" && "$RUN" setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"); }
attacker_on() { local node=$1; shift; "$RUN" --node "$node" setpriv --reuid="$ATTACKER" --regid="$(id -g "$ATTACKER")" --clear-groups "$@"; }
attacks=()
restore() {
  local p
  for p in ${attacks[@]+"${attacks[@]}"}; do kill "$p" 2>/dev/null || true; done
  "$TESTS_DIR/up.sh" >/dev/null 2>&1 || true
}
trap 'restore; rm -rf "$WORK"' EXIT
# A short preflight time-out: a rank that ends on a forged entry is waited for no longer.
mkdir "$WORK/profiles"
printf 'name: lab-hostile\npreflight: {timeout_s: 10}\n' >"$WORK/profiles/lab-hostile.yaml"
chmod -R a+rX "$WORK/profiles"
DDP_SPANK_ARGS="${DDP_SPANK_ARGS:+$DDP_SPANK_ARGS }preflight=$PREFLIGHT profile_dir=$WORK/profiles" "$TESTS_DIR/up.sh" \
  >/dev/null 2>&1 || fail "lab restart with the preflight"

# The port an attacker computes for step 0 of a job from its public id, as the plugin does.
port_of() { "$PLAN" --job-id "$1" --step-id 0 --nodes 2 --nodelist 'n[1-2]' --json 2>/dev/null |
  "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["step"]["master_port"])'; }

# No slurmstepd of the job is left, and every node is idle (not drained, not draining).
settled() {
  local job=$1 i states
  for ((i = 0; i < 100; i++)); do
    states=$("$RUN" sinfo -h -N -o '%N=%t' | sort -u | tr '\n' ' ')
    if ! pgrep -f "slurmstepd: \[$job\." >/dev/null && [[ $states == "n1=idle n2=idle " ]]; then return 0; fi
    sleep 0.2
  done
  fail "job $job: nodes $states; slurmstepd: $(pgrep -af "slurmstepd: \[$job\." || echo none)"
}

# 1. A forged failed check of rank 1's, written over and over from the moment rank 0's store
# listens, during a --ddp-preflight step of a --ddp-retries job.
cat >"$WORK/forge.py" <<'PY'
import datetime, sys, time
from torch.distributed import TCPStore
port, deadline = int(sys.argv[1]), time.time() + float(sys.argv[2])
# Rank 1's check report as ddp-preflight writes it (preflight/messages.cpp), but failed: before
# the store was sealed, rank 0 believed it, failed the step naming n2, and requeued the job
# without it.
forged = (b'{"rank":1,"node_rank":1,"host":"n2","gpu_bus_id":"",'
          b'"checks":[{"check":"gpus","status":"failed","detail":"forged"}]}')
store, writes = None, 0
while time.time() < deadline:
    try:
        if store is None:
            # torch 2.x asks for libuv unless told, which Debian's build lacks; 1.13 has no switch.
            try:
                store = TCPStore("n1", port, 1, False, datetime.timedelta(seconds=1), use_libuv=False)
            except TypeError:
                store = TCPStore("n1", port, 1, False, datetime.timedelta(seconds=1))
        # The round's "every rank left its text" too: rank 0 then reads at once, before rank 1
        # writes its own (which the loop overwrites again anyway).
        store.set("ddp/to0/1/1", forged)
        store.set("ddp/to0/1/all", b"1")
        writes += 1
        if writes == 1:
            print("reached", flush=True)
    except Exception:
        store = None
        time.sleep(0.01)
print("forged", writes, flush=True)
PY
printf '#!/bin/bash\nsrun --ddp-preflight %s meet; echo "rc=$?"\n' "$WORKER" >"$WORK/job.sh"
chmod 755 "$WORK/job.sh" "$WORK/forge.py"
job=$(victim sbatch --parsable --hold --requeue --ddp-nodes=2 --ddp-gpus=1 --ddp-retries=1 --ddp-profile=lab-hostile \
  -o "$WORK/job.out" "$WORK/job.sh")
port=$(port_of "$job")
[ -n "$port" ] || fail "could not compute job $job's port"
attacker_on n1 "$PYTHON" "$WORK/forge.py" "$port" 40 >"$WORK/forge.out" 2>/dev/null &
attacks+=($!)
sleep 1
"$RUN" scontrol release "$job"
for ((i = 0; i < 300; i++)); do
  [[ $(job_field "$job" JobState) == COMPLETED || $(job_field "$job" JobState) == FAILED ]] && break
  sleep 0.2
done
out=$(cat "$WORK/job.out")
echo "$out"
[ "$(job_field "$job" Restarts)" = 0 ] || fail "forged data requeued the job: Restarts=$(job_field "$job" Restarts)"
[ -z "$(job_field "$job" ExcNodeList)" ] || [ "$(job_field "$job" ExcNodeList)" = "(null)" ] ||
  fail "forged data excluded a node: ExcNodeList=$(job_field "$job" ExcNodeList)"
[[ $out != *"asking Slurm to requeue"* ]] || fail "a retry was asked on forged data: $out"
[[ $out != *"(forged)"* && $out != *"detail\":\"forged"* ]] || fail "forged words were believed: $out"
if [[ $out == *"rc=0"* ]]; then
  echo "the preflight and the program ran: every forged entry was overwritten before it was read"
else
  expect_contains "$out" "that no rank of this step wrote" "a forged entry named"
  expect_contains "$out" "(tampering)" "tampering named"
fi
kill "${attacks[-1]}" 2>/dev/null || true
wait "${attacks[-1]}" 2>/dev/null || true
grep -q '^reached' "$WORK/forge.out" || fail "the attacker never reached the store: $(cat "$WORK/forge.out")"
settled "$job"

# 2. UDP MASTER_PORT held on the head node, listening for what the nodes' watches send, while
# rank 1 of a 2-node step is killed: the watch names it (the head heard the member), and the
# attacker hears nothing.
cat >"$WORK/listen.py" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", int(sys.argv[1])))
s.settimeout(0.2)
print("listening", flush=True)
got, end = 0, time.time() + float(sys.argv[2])
while time.time() < end:
    try:
        s.recv(2048)
        got += 1
    except socket.timeout:
        pass
print("received", got, flush=True)
PY
chmod 755 "$WORK/listen.py"
cat >"$WORK/kill.sh" <<'JOB'
#!/bin/bash
srun --ddp-watch=5 bash -c 'if [ "$RANK" = 1 ]; then sleep 3; kill -KILL $$; fi; sleep 60'; echo "rc=$?"
JOB
chmod 755 "$WORK/kill.sh"
job=$(victim sbatch --parsable --hold --ddp-nodes=2 --ddp-gpus=1 -o "$WORK/kill.out" "$WORK/kill.sh")
port=$(port_of "$job")
attacker_on n1 "$PYTHON" "$WORK/listen.py" "$port" 30 >"$WORK/listen.out" 2>&1 &
attacks+=($!)
for _ in $(seq 50); do grep -q listening "$WORK/listen.out" 2>/dev/null && break; sleep 0.1; done
grep -q listening "$WORK/listen.out" || fail "the attacker could not hold UDP $port: $(cat "$WORK/listen.out")"
"$RUN" scontrol release "$job"
for ((i = 0; i < 300; i++)); do
  [[ $(job_field "$job" JobState) == COMPLETED || $(job_field "$job" JobState) == FAILED ]] && break
  sleep 0.2
done
out=$(cat "$WORK/kill.out")
echo "$out"
expect_contains "$out" "failed: rank 1 on n2 was killed by signal 9 (SIGKILL)" "the watch's verdict"
[[ $out != *"cannot listen"* && $out != *"never reached the failure watch"* ]] ||
  fail "the watch lost its network to the attacker: $out"
kill "${attacks[-1]}" 2>/dev/null || true
wait "${attacks[-1]}" 2>/dev/null || true
settled "$job"
received=$(sed -n 's/^received //p' "$WORK/listen.out")
[ -z "$received" ] || [ "$received" = 0 ] || fail "the attacker received $received of the watch's datagrams"
echo "PASS: forged store data named as tampering, nothing requeued or excluded; the watch unmoved by a held MASTER_PORT"
