#!/bin/bash
# ddp-monitor's monitor.dir against other users, as a shared /scratch is used: the sampler runs as
# the job's user (nobody) with --dir SHARED/%u/mon, where SHARED is root's and sticky (mode 1777).
# It makes the directory itself; a directory on the way that another user made or may write, or
# a symbolic link there, is refused with one warning that names it, its mode and owner and the
# fix, nothing is written there, and the sampler still ends with the task and prints its summary.
# In the user's own shared (sticky) directory, a file of the same name made first by another user,
# as a FIFO or as a plain file, is never written and never blocks the sampler.
#   sampler_dir_test.sh DDP_MONITOR    (as root: it makes files of other users)
set -euo pipefail
MONITOR=$1
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to act as other users"; exit 77; }
command -v setpriv >/dev/null && id nobody >/dev/null 2>&1 && id daemon >/dev/null 2>&1 ||
  { echo "SKIP: needs setpriv and the users nobody and daemon"; exit 77; }
T=$(mktemp -d /tmp/ddp-monitor-dir-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
fail() { echo "FAIL: $*" >&2; exit 1; }
SHARED=$T/scratch
mkdir -m 1777 "$SHARED"
ME=$SHARED/nobody  # what %u becomes
FILE=ddp-monitor-7.0-n1.jsonl
as() { local who=$1; shift; setpriv --reuid="$who" --regid="$(id -g "$who")" --clear-groups "$@"; }

# Runs the sampler as nobody on a task of one second; leaves its stderr in $out.
sample() {
  sleep 1 &
  local task=$! rc=0
  out=$(cd "$T" && as nobody timeout 20 "$MONITOR" --job 7 --node n1 --interval 1 \
    --dir "$SHARED/%u/mon" --task "0:$task" 2>&1) || rc=$?
  wait "$task" || true
  [ "$rc" = 0 ] || fail "ddp-monitor exited with $rc (124: it hung): $out"
  grep -q '^ddp-monitor: node n1 (1 of 1), job 7 step 0: ' <<<"$out" || fail "no summary: $out"
}
refused() {  # the one warning line, with what it must name
  local line
  line=$(grep '^ddp-monitor on n1: warning: ' <<<"$out") || fail "no warning: $out"
  [ "$(wc -l <<<"$line")" = 1 ] || fail "more than one warning line: $line"
  for part in "$@"; do
    grep -qF -- "$part" <<<"$line" || fail "the warning lacks \"$part\": $line"
  done
  grep -qF "this node's samples are not kept" <<<"$line" || fail "the warning does not say so: $line"
  echo "refused: ${line#ddp-monitor on n1: warning: }"
}
reset() { rm -rf "$ME" "$T/victim"; }

# 1. Another user made /scratch/nobody first.
reset; mkdir -m 755 "$ME"; chown daemon: "$ME"
sample
refused "will not write in $ME/mon: $ME (mode 0755, owner daemon, uid 1) belongs to another user" \
  "only root or nobody, uid 65534 may own it" "remove it (or ask its owner or the admin to)"
[ -z "$(ls -A "$ME")" ] || fail "the sampler wrote into another user's directory: $(ls -A "$ME")"

# 2. The user's own, but anyone may write it (and it is not sticky).
reset; mkdir "$ME"; chmod 777 "$ME"; chown nobody: "$ME"
sample
refused "$ME (mode 0777, owner nobody, uid 65534) is writable by others" "chmod go-w $ME"
[ ! -e "$ME/mon" ] || fail "the sampler made $ME/mon in a directory anyone may write"

# 3. Another user's symbolic link in its place, to a directory of the user's.
reset; mkdir -m 755 "$T/victim"; chown nobody: "$T/victim"
ln -s "$T/victim" "$ME"; chown -h daemon: "$ME"
sample
refused "$ME is a symbolic link to '$T/victim' (owner daemon, uid 1), which is never followed"
[ -z "$(ls -A "$T/victim")" ] || fail "the sampler followed the link: $(ls -A "$T/victim")"

# 4. Nothing there yet: the sampler makes it, as the user's, writable by no one else even with a
#    careless umask, and keeps its samples in it.
reset
umask_was=$(umask); umask 000
sample
umask "$umask_was"
! grep -q 'warning' <<<"$out" || fail "a warning for a directory of its own making: $out"
[ "$(stat -c '%U %a' "$ME" "$ME/mon" | sort -u)" = "nobody 755" ] ||
  fail "made $(stat -c '%n %U %a' "$ME" "$ME/mon")"
tail -1 "$ME/mon/$FILE" | grep -q '"kind":"end",.*"reason":"tasks-ended"}$' || fail "no samples in $ME/mon/$FILE"
[ "$(stat -c %U "$ME/mon/$FILE")" = nobody ] || fail "$ME/mon/$FILE is not the user's"

# 5. The user's own sticky directory: another user made the file's name first, as a plain file
#    anyone may write (it would get the samples) and as a FIFO (opening it would block).
reset; mkdir -p "$ME/mon"; chown -R nobody: "$ME"; chmod 1777 "$ME/mon"
as daemon sh -c "echo theirs >'$ME/mon/$FILE'; chmod 666 '$ME/mon/$FILE'"
sample
refused "will not write $ME/mon/$FILE: it belongs to uid 1, not to this job's user; remove it"
[ "$(cat "$ME/mon/$FILE")" = theirs ] || fail "the sampler wrote into another user's file"
rm -f "$ME/mon/$FILE"
as daemon mkfifo -m 666 "$ME/mon/$FILE"
sample
refused "will not write $ME/mon/$FILE: it is not a regular file"
echo "PASS: monitor.dir of other users refused with one warning, made by the sampler otherwise"
