#!/bin/bash
# A Python DDP program (Debian's python3-torch, Gloo) under srun --ddp, run as user nobody, with
# one fault on one rank: killed, stopped or hung, the failure watch ends the step within its bound
# and says once which rank failed first and how; a rank that ends well early, or one that only
# takes long, ends nothing. Each case times the fault to srun's end.
source "$(dirname "$0")/python_steps.sh"
command -v cc >/dev/null || { echo "SKIP: no C compiler for the D-state program"; exit 77; }
cc -o "$OUT/dstate" "$PROGRAMS/dstate_hang.c"

case_ killed sigkill 2
[ "$RC" != 0 ] || fail "killed: the step succeeded"
within 10 "SIGKILL"
[ "$(verdicts)" = 1 ] || fail "killed: expected one verdict: $TEXT"
expect_contains "$TEXT" "failed: rank 2 on n2 was killed by signal 9 (SIGKILL), the first of 4 ranks" "killed: named"

case_ early_exit exit0 3 $((WATCH + 4))
[ "$RC" = 0 ] || fail "early exit: a rank that ended well ended the step (exit $RC): $TEXT"
[ "$(verdicts)" = 0 ] || fail "early exit: a verdict: $TEXT"
[ "$(grep -c '^done rank' <<<"$TEXT")" = 4 ] || fail "early exit: not every rank finished: $TEXT"

case_ slow_checkpoint slow 0 $((WATCH + 8))
[ "$RC" = 0 ] || fail "slow rank: ended (exit $RC): $TEXT"
[ "$(verdicts)" = 0 ] || fail "slow rank: a verdict: $TEXT"
[ "$(grep -c '^done rank' <<<"$TEXT")" = 4 ] || fail "slow rank: not every rank finished: $TEXT"

case_ stopped sigstop 1
[ "$RC" != 0 ] || fail "stopped: the step succeeded"
within $((WATCH + 5)) "SIGSTOP"
[ "$(verdicts)" = 1 ] || fail "stopped: expected one verdict: $TEXT"
expect_contains "$TEXT" "failed: rank 1 on n1 has been stopped (state T: SIGSTOP or SIGTSTP) for $WATCH s; ending the step (failure watch time-out $WATCH s" "stopped: named"

# State D has its own, longer time-out (a file system's failover is no hang): set to WATCH here.
WATCH_ARG=$WATCH:$WATCH case_ hung dstate 3
[ "$RC" != 0 ] || fail "hung: the step succeeded"
within $((WATCH + 5)) "D state"
[ "$(verdicts)" = 1 ] || fail "hung: expected one verdict: $TEXT"
expect_contains "$TEXT" "failed: rank 3 on n2 has been in uninterruptible sleep (state D) for $WATCH s" "hung: named"

# Nothing of the steps lives on (the watches leave within a second of their node's last task).
processes_gone nobody 'python3|dstate|ddp-watch' 10 || fail "processes of the steps outlived them: $LIVE"
echo "PASS: ${TIMES[*]} (fault to srun's end; --ddp-watch=$WATCH)"
