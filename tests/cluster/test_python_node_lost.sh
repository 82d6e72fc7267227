#!/bin/bash
# A node drops off the network in the middle of a Python DDP program under srun --ddp (n2's link
# goes down: no resets, no goodbyes, as when a node loses power; the program's collectives have a
# 10-minute time-out). The head node's failure watch finds n2 silent and ends the step through
# Slurm, naming n2 and its ranks once; n2's own watch, cut off, ends the ranks there. srun returns
# within the watch's time-out + KillWait + a few seconds, long before Slurm's SlurmdTimeout. The
# link comes back before that, so the lab stays usable.
source "$(dirname "$0")/testlib.sh"
"$PYTHON" -c "import torch.distributed.elastic.multiprocessing.errors" 2>/dev/null ||
  { echo "SKIP: python3-torch missing"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }
WATCH=10
KILL_WAIT=2  # up.sh's KillWait: srun waits that + 2 s for a node it cannot reach
netns=ddplab-n2
link_up() { ip -n "$netns" link set eth0 up; }
OUT=$WORK/out
mkdir -p "$OUT"
chown nobody:"$(id -gn nobody)" "$OUT"
trap 'link_up 2>/dev/null || true; kill "${SRUN:-0}" 2>/dev/null || true; rm -rf "$WORK"' EXIT

(cd "$OUT" && exec "$RUN" setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
  timeout 150 srun --ddp -N2 --ntasks-per-node=2 --ddp-watch=$WATCH --export=ALL,STEPS=4000 \
  "$PYTHON" "$PROGRAMS/python_faults.py" none 0 >"$OUT/srun.out" 2>&1) &
SRUN=$!
for r in 0 1 2 3; do
  wait_for_line "$OUT/srun.out" "^step 10 rank $r$" 90 || fail "rank $r never trained: $(cat "$OUT/srun.out")"
done
ip -n "$netns" link set eth0 down
start=$(now)
limit=$((WATCH + 2 + KILL_WAIT + 2 + 6))  # silence, beats, srun's wait for the lost node, slack
for ((i = 0; i < limit * 5; i++)); do
  kill -0 "$SRUN" 2>/dev/null || break
  sleep 0.2
done
took=$(elapsed "$start")
kill -0 "$SRUN" 2>/dev/null && fail "srun still runs $took s after n2 went off the network: $(cat "$OUT/srun.out")"
link_up
out=$(grep -v '^step \|^  \|^Traceback\|^RuntimeError\|^    ' "$OUT/srun.out" || true)
echo "$out"
[ "$(grep -c '^spank_ddp: step [0-9.]* failed: ' <<<"$out")" = 1 ] || fail "expected one verdict"
expect_contains "$out" "failed: node n2 (ranks 2-3) has not answered the failure watch for " "n2 and its ranks named"
expect_contains "$out" "the node froze, or dropped off the network; ending the step (failure watch time-out $WATCH s" "the cause and the setting"
# The ranks on n2, cut off, were ended by n2's own watch.
processes_gone nobody 'python3|ddp-watch' 10 || fail "processes of the step outlived it: $LIVE"
"$TESTS_DIR/up.sh" >/dev/null 2>&1 || fail "the lab did not recover"
echo "PASS: srun ended ${took} s after n2 went off the network (--ddp-watch=$WATCH, KillWait=$KILL_WAIT)"
