#!/usr/bin/env bash
# What CI runs (`make ci`, .ci/run): every test on Jazzy (`make test-all`: Nav2 and the marked
# long tests included), then the quick tier on Kilted (`make test DISTRO=kilted`; there is no
# Nav2 build for Kilted here). Kilted's tests run whatever Jazzy's give; a set-up that fails
# ends the run. Exit 1 if anything failed.
#
# Kilted's set-up (its venv, the colcon build, its kernels compiled ahead of time: about 160 s,
# most of it CPU) runs beside Jazzy's tests, at the lowest CPU and I/O priority, in the time
# they leave idle: `make test-all` runs stock Nav2 first, at real time, which leaves one core of
# two idle for about four minutes. It starts once Jazzy's set-up has compiled the kernels: the
# two share numba's cache of the kernels (the sources' folder, which install/ links to).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

make --no-print-directory setup DISTRO=jazzy || { echo "CI: Jazzy's set-up failed"; exit 1; }
mkdir -p log
kilted_setup_log="log/ci-kilted-setup.log"
# Linux shares the CPU between sessions first (autogroups, where the kernel has them), whatever
# the niceness of the processes in each. The launch tests and stock Nav2 run in sessions of their
# own: beside a set-up that was only niced, in CI's session, they got at most half the CPU, and
# Nav2 at real time failed. So the set-up gets a session of its own, with the lowest priority
# (without CAP_SYS_ADMIN the kernel takes one such change per 100 ms, system-wide: retried).
lowest_priority_setup='
for _ in 1 2 3 4 5 6 7 8 9 10; do
  { echo 19 >/proc/self/autogroup; } 2>/dev/null && break
  [ -e /proc/self/autogroup ] || break  # no autogroups: niceness alone is enough
  sleep 0.1
done
if [ -e /proc/self/autogroup ] && ! grep -q " nice 19$" /proc/self/autogroup; then
  echo "[ci] warning: the priority of this session (/proc/self/autogroup) could not be" \
    "lowered: the Kilted set-up takes CPU from the Jazzy tests"
fi
exec nice -n 19 ionice -c 3 make --no-print-directory setup DISTRO=kilted'
setsid bash -c "$lowest_priority_setup" >"$kilted_setup_log" 2>&1 &
kilted_setup=$!  # its session's and process group's id: started in the background, setsid
trap 'kill -- -$kilted_setup 2>/dev/null' EXIT  # does not fork

make --no-print-directory test-all DISTRO=jazzy
jazzy_status=$?

wait $kilted_setup
kilted_setup_status=$?
trap - EXIT
cat "$kilted_setup_log"
if [ $kilted_setup_status -ne 0 ]; then
  echo "CI: Kilted's set-up failed (exit $kilted_setup_status; its output is above)"
  echo "CI: Jazzy, every test: exit $jazzy_status; Kilted: not run"
  exit 1
fi
make --no-print-directory test DISTRO=kilted
kilted_status=$?

# Printed again last, where the end of CI's log shows them (tools/run_tests.sh).
for dump in build/*/test-results/hung-test-*.txt; do
  grep -qs '^Timeout (' "$dump" || continue
  echo "CI: a test ran over its time limit ($dump):"
  cat "$dump"
done
echo "CI: Jazzy, every test: exit $jazzy_status; Kilted, quick tier: exit $kilted_status"
[ $jazzy_status -eq 0 ] && [ $kilted_status -eq 0 ]
