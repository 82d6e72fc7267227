#!/bin/bash
# The contract's rules on a real cluster: steps without --ddp are left alone; a value the user set
# for OMP_NUM_THREADS or CUDA_DEVICE_ORDER wins, a stale RANK never does; --ddp-verbose prints the
# plan; --ddp-port fixes the port; Slurm's reserved port (MpiParams=ports) wins over derivation.
source "$(dirname "$0")/testlib.sh"

out=$(timeout 60 "$RUN" srun -N2 -n2 "$PROGRAMS/print_contract.sh" 2>&1) || fail "plain srun: $out"
[ "$(grep -c 'RANK=unset .*MASTER_ADDR=unset' <<<"$out")" = 2 ] ||
  fail "a step without --ddp got the contract: $out"

out=$(OMP_NUM_THREADS=3 CUDA_DEVICE_ORDER=FASTEST_FIRST RANK=99 WORLD_SIZE=99 timeout 60 \
  "$RUN" srun --ddp --ddp-verbose -N2 --ntasks-per-node=1 "$PROGRAMS/print_contract.sh" 2>&1) ||
  fail "srun --ddp: $out"
echo "$out"
[ "$(grep -c 'OMP_NUM_THREADS=3 CUDA_DEVICE_ORDER=FASTEST_FIRST' <<<"$out")" = 2 ] ||
  fail "the user's OMP_NUM_THREADS / CUDA_DEVICE_ORDER did not win: $out"
grep -q 'RANK=99\|WORLD_SIZE=99' <<<"$out" && fail "a stale RANK/WORLD_SIZE survived: $out"
[ "$(grep -c '^spank_ddp: rank [01]/2 local 0/1 node [01]/2 master n1:[0-9]* backend gloo' <<<"$out")" = 2 ] ||
  fail "--ddp-verbose did not print each task's plan: $out"

out=$(timeout 60 "$RUN" srun --ddp-port=23456 -N2 -n2 "$PROGRAMS/print_contract.sh" 2>&1) ||
  fail "srun --ddp-port: $out"
[ "$(grep -c 'MASTER_PORT=23456 .*DDP_PORT_SOURCE=option' <<<"$out")" = 2 ] || fail "--ddp-port: $out"

# Reserved ports need MpiParams=ports= in slurm.conf: restart the lab with it, then restore it.
restore() { env -u LAB_RESV_PORTS "$TESTS_DIR/up.sh" >/dev/null 2>&1 || true; }
trap 'restore; rm -rf "$WORK"' EXIT
LAB_RESV_PORTS=21000-21099 "$TESTS_DIR/up.sh" >/dev/null 2>&1 || fail "lab restart with MpiParams=ports"
out=$(timeout 60 "$RUN" srun --resv-ports=1 --ddp -N2 -n2 "$PROGRAMS/print_contract.sh" 2>&1) ||
  fail "srun --resv-ports=1: $out"
echo "$out"
port=$(grep -o 'MASTER_PORT=[0-9]*' <<<"$out" | sort -u | cut -d= -f2)
[ "$(wc -l <<<"$port")" = 1 ] && [ "$port" -ge 21000 ] && [ "$port" -le 21099 ] &&
  [ "$(grep -c 'DDP_PORT_SOURCE=reserved' <<<"$out")" = 2 ] || fail "reserved port not used: $out"
echo "PASS: activation, precedence, verbose, fixed and reserved ports"
