#!/bin/bash
# libasan_locks_fork.sh LIBASAN: exit 0 when this libasan takes its allocator's locks around fork
# (it registers a fork handler), 1 when it does not, 2 when it cannot tell.
# slurmstepd forks each task while its own threads allocate: with a libasan that takes no lock
# (GCC 12's and 14's, Debian 12 and 13), the child can wait forever on a lock a parent thread held
# at the fork, in Slurm's own setup_env before the task's exec; the step hangs and Slurm drains
# the node. GCC 16's (sid) registers the handler. The build makes the sanitized plugin only where
# it can run (CMakeLists.txt), and its cluster test checks again (test_sanitized_plugin.sh).
asan=${1:?usage: $0 LIBASAN}
[ -r "$asan" ] || { echo "no $asan" >&2; exit 2; }
command -v nm >/dev/null || { echo "nm (binutils) is needed to read $asan" >&2; exit 2; }
symbols=$(nm -D --undefined-only "$asan") || exit 2
grep -q -e '__register_atfork' -e 'pthread_atfork' <<<"$symbols"
