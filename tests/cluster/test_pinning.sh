#!/bin/bash
# Tasks really run pinned as planned: each task's Cpus_allowed_list is its DDP_CPUS, ranks of one
# node get disjoint CPUs, and `ddp-plan` given the node's topology (a cached XML, as sites may
# configure with plugstack topology=) promises exactly what the tasks got.
source "$(dirname "$0")/testlib.sh"
[ -n "${DDP_PLAN_BIN:-}" ] || fail "DDP_PLAN_BIN is not set (CTest sets it)"

cat >"$WORK/show.sh" <<'SHOW'
#!/bin/bash
echo "pin host=$(hostname) rank=$RANK allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status) DDP_CPUS=${DDP_CPUS-unset} OMP_NUM_THREADS=$OMP_NUM_THREADS"
env > "$(dirname "$0")/env.$RANK"
SHOW
chmod +x "$WORK/show.sh"

ncpu=$(nproc --all)
out=$(timeout 60 "$RUN" srun --ddp -N2 --ntasks-per-node=2 "$WORK/show.sh" 2>&1) || fail "srun: $out"
echo "$out"
while read -r line; do
  allowed=$(field "$line" allowed)
  [ "$allowed" = "$(field "$line" DDP_CPUS)" ] || fail "task not pinned as planned: $line"
done < <(grep '^pin ' <<<"$out")
if [ "$ncpu" -ge 2 ]; then
  for node in n1 n2; do
    sets=$(grep "^pin host=$node " <<<"$out" | sed 's/.* allowed=\([^ ]*\).*/\1/' | sort -u | wc -l)
    [ "$sets" = 2 ] || fail "the two ranks on $node share CPUs: $out"
  done
fi

out=$(timeout 60 "$RUN" srun --ddp --ddp-bind=none -N1 -n2 "$WORK/show.sh" 2>&1) || fail "srun: $out"
grep -q 'DDP_CPUS=unset' <<<"$out" || fail "--ddp-bind=none still pinned: $out"

# The node's topology as a cached XML file: the plugin loads it instead of probing the machine.
lstopo-no-graphics --of xml "$WORK/node.xml" || fail "lstopo could not export this machine"
DDP_SPANK_ARGS="${DDP_SPANK_ARGS:+$DDP_SPANK_ARGS }topology=$WORK/node.xml" "$TESTS_DIR/up.sh" >/dev/null 2>&1 || fail "lab restart"
restore() { "$TESTS_DIR/up.sh" >/dev/null 2>&1 || true; }
trap 'restore; rm -rf "$WORK"' EXIT
out=$(timeout 60 "$RUN" srun --ddp -N1 -n2 "$WORK/show.sh" 2>&1) || fail "srun with topology=: $out"
job=$(sed -n 's/^SLURM_JOB_ID=//p' "$WORK/env.0")
# The same facts on node n1 (its network namespace: the interfaces the tasks saw).
"$RUN" --node n1 "$DDP_PLAN_BIN" --json --topology "$WORK/node.xml" --tasks 2 --cpus-allowed "0-$(( ncpu - 1 ))" \
  --job-id "$job" --nodelist n1 --cpus 2 --ddp-bind closest >"$WORK/plan.json" 2>&1 ||
  fail "ddp-plan: $(cat "$WORK/plan.json")"
"$PYTHON" "$PROGRAMS/compare_plan.py" "$WORK/plan.json" "$WORK" || fail "ddp-plan disagrees with the tasks"
echo "PASS: tasks pinned as planned; ddp-plan --topology matches"
