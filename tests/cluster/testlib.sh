# Shared helpers for the cluster integration tests (sourced). Each test is a bash script that
# exits 0 on success, 1 on failure, 77 when it cannot run here (not root: CTest shows it skipped).
set -euo pipefail
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROGRAMS="$TESTS_DIR/programs"
# Debian's python3-torch, whatever python3 comes first on PATH.
PYTHON=/usr/bin/python3
RUN="$TESTS_DIR/run.sh"

if [ "$(id -u)" != 0 ]; then
  echo "SKIP: the test cluster needs root (network namespaces, slurmd)"
  exit 77
fi

WORK=$(mktemp -d /tmp/ddp-test.XXXXXX)
chmod 755 "$WORK"
trap 'rm -rf "$WORK"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect_contains TEXT NEEDLE WHAT
expect_contains() {
  case "$1" in
    *"$2"*) ;;
    *) printf 'FAIL: %s: expected to find "%s" in:\n%s\n' "$3" "$2" "$1" >&2; exit 1 ;;
  esac
}

# field LINE NAME: the value of NAME=value in a contract line.
field() {
  sed -n "s/.*[[:space:]]$2=\([^[:space:]]*\).*/\1/p" <<<"$1"
}

# run_expect_failure WHAT CMD...: the command must fail; prints its combined output.
run_expect_failure() {
  local what=$1 out
  shift
  if out=$(timeout 60 "$@" 2>&1 </dev/null); then
    printf 'FAIL: %s: expected failure, got success:\n%s\n' "$what" "$out" >&2
    exit 1
  fi
  printf '%s' "$out"
}
