#!/bin/bash
# Every program of slurm-ddp says its name and the release with --version, and exits 0.
#   version_test.sh VERSION PROGRAM...
set -euo pipefail
version=$1
shift
for program in "$@"; do
  out=$("$program" --version) || { echo "FAIL: $program --version exited $?" >&2; exit 1; }
  [ "$out" = "$(basename "$program") $version" ] ||
    { echo "FAIL: $program --version said '$out', expected '$(basename "$program") $version'" >&2; exit 1; }
  echo "$out"
done
echo "PASS: $# programs say their version"
