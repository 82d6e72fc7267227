#!/bin/bash
# The node facts file on real slurmds: slurmd writes it at its start (root, 0644, in a directory
# only root may write); --ddp steps read it instead of loading hwloc and say so with
# --ddp-verbose, with the plugin's own time; a damaged, stale or unsafe file is never believed,
# and the next DDP step writes it again; steps without --ddp never touch it.
source "$(dirname "$0")/testlib.sh"
source "$TESTS_DIR/lab-env.sh"

dir="$LAB_DIR/node-facts"
file="$dir/node-facts"

# The lab as the other tests leave it may have run steps already: start its slurmds afresh so
# the file is the one slurmd wrote at its start.
"$TESTS_DIR/down.sh" >/dev/null 2>&1
"$TESTS_DIR/up.sh" >"$WORK/up.log" 2>&1 || fail "lab start: $(tail -5 "$WORK/up.log")"
[ -f "$file" ] || fail "slurmd wrote no node facts file at its start: $(ls -la "$dir" 2>&1)"
[ "$(stat -c '%U %a' "$file")" = "root 644" ] || fail "node facts file: $(stat -c '%U %a' "$file")"
[ "$(stat -c '%U %a' "$dir")" = "root 755" ] || fail "node facts directory: $(stat -c '%U %a' "$dir")"
head -1 "$file" | grep -qx 'slurm-ddp node facts 1' || fail "not a node facts file: $(head -3 "$file")"
grep -q "spank_ddp: node topology loaded with hwloc" "$LAB_LOG_DIR"/slurmd-n1.log ||
  fail "slurmd's log does not say it loaded the topology"

# verbose_step NAME: a 2-node --ddp step with --ddp-verbose; its output in $WORK/NAME.
verbose_step() {
  timeout 60 "$RUN" srun --ddp --ddp-verbose -N2 -n2 true >"$WORK/$1" 2>&1 ||
    fail "step $1: $(cat "$WORK/$1")"
}
# topology_lines NAME: the per-node work lines of step NAME, one per node.
topology_lines() {
  local lines
  lines=$(grep "the plugin's work for this step took" "$WORK/$1") || fail "step $1 printed no work line: $(cat "$WORK/$1")"
  [ "$(wc -l <<<"$lines")" = 2 ] || fail "step $1: expected one work line per node: $lines"
  printf '%s\n' "$lines"
}

verbose_step read
lines=$(topology_lines read)
echo "$lines"
[ "$(grep -c "topology: node facts file $file (" <<<"$lines")" = 2 ] ||
  fail "the steps did not read the node facts file: $lines"
# How fast that is (far below hwloc's milliseconds) is bench/launch_overhead.sh's to measure: a
# time here fails whenever the machine is busy.

# Damaged: refused, loaded with hwloc, written again; the step runs.
printf 'slurm-ddp node facts 1\nkey source live\n' >"$file"
verbose_step damaged
expect_contains "$(topology_lines damaged)" "is damaged: node facts line 2: ends before its key" "a damaged file"
expect_contains "$(topology_lines damaged)" "rewritten" "a damaged file"
verbose_step after_damage
[ "$(topology_lines after_damage | grep -c "topology: node facts file $file (")" = 2 ] ||
  fail "the file was not written again: $(cat "$WORK/after_damage")"

# Stale: the node rebooted (as when the directory is not a tmpfs cleared at boot).
sed -i 's/^key boot_id .*/key boot_id 00000000-0000-0000-0000-000000000000/' "$file"
verbose_step stale
expect_contains "$(topology_lines stale)" "stale: the boot id (the node rebooted) changed: rewritten" "a stale file"
grep -q "^key boot_id $(cat /proc/sys/kernel/random/boot_id)$" "$file" || fail "the boot id was not renewed"

# Unsafe: a file others may write is not believed, and is replaced by a safe one.
chmod 666 "$file"
verbose_step unsafe
expect_contains "$(topology_lines unsafe)" "it is writable by others: rewritten" "a file others may write"
[ "$(stat -c '%a' "$file")" = 644 ] || fail "the replaced file has mode $(stat -c '%a' "$file")"

# A directory others may write is neither read nor written; the step still runs on hwloc.
chmod 777 "$dir"
verbose_step unsafe_dir
expect_contains "$(topology_lines unsafe_dir)" \
  "$dir (mode 0777, owner root, uid 0) is writable by others, who could swap what lies under it: chmod go-w $dir" \
  "a directory others may write"
expect_contains "$(topology_lines unsafe_dir)" "or choose another directory: not rewritten" \
  "a directory others may write"
grep -q "spank_ddp: node topology loaded with hwloc .*$dir (mode 0777" "$LAB_LOG_DIR"/slurmd-n1.log ||
  fail "slurmd's log does not say why the step loaded hwloc"
chmod 755 "$dir"

# Steps without --ddp never touch it, not even to make it.
rm -f "$file"
timeout 60 "$RUN" srun -N2 -n2 true || fail "a plain step failed"
[ ! -e "$file" ] || fail "a step without --ddp wrote the node facts file"
verbose_step remade
expect_contains "$(topology_lines remade)" "there is none yet: rewritten" "the first DDP step"
[ -f "$file" ] || fail "the first DDP step did not write the file"
echo "PASS: slurmd writes the node facts, DDP steps read them in $(sed -n 's/.*node facts file [^ ]* (\([0-9.]* ms\)).*/\1/p' <<<"$lines" | head -1), damaged, stale and unsafe files are rebuilt"
