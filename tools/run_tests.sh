#!/usr/bin/env bash
# Run the tests: (tier `all`) the stock Nav2 end-to-end tests in test/nav2/, then `colcon test`
# for the wheelsim package, then the top-level system tests in test/.
# WHEELSIM_TEST_TIER=quick (`make test`, the default): every test that guards behaviour, without
# the marked long ones (soak, cluster, slow: wheelsim/testing/fixtures.py MARKERS) and without
# Nav2. WHEELSIM_TEST_TIER=all (`make test-all`; CI's `make ci` runs it on Jazzy): every test.
# Prints one summary line and exits non-zero when anything failed or when no test ran.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
set +u  # the sourced setup files use unset variables
# shellcheck disable=SC1091
source env.sh || exit 2
set -u
distro="$WHEELSIM_DISTRO"
echo "[test] ROS 2 $distro"

results="$root/build/$distro/test-results"
# Every run shuffles the modules and the tests inside each (pytest-random-order), so no test
# relies on another's leftovers. The seed is printed here (pytest's -q hides the plugin's own
# line); WHEELSIM_TEST_SEED=N replays an order.
seed="${WHEELSIM_TEST_SEED:-$((RANDOM * 32768 + RANDOM))}"
echo "[test] random order seed $seed (replay: WHEELSIM_TEST_SEED=$seed make test DISTRO=$distro)"
order=(-p random_order --random-order-bucket=module "--random-order-seed=$seed")
tier="${WHEELSIM_TEST_TIER:-quick}"
case "$tier" in
  quick) marks='not soak and not cluster and not slow' ;;
  all) marks='' ;;
  *) echo "[test] error: WHEELSIM_TEST_TIER=$tier: use quick or all" >&2; exit 2 ;;
esac
echo "[test] tier $tier"
# Test processes share the cores (pytest-xdist); the tests marked `early` (and the long tiers'
# marks: wheelsim/testing/fixtures.py) start first, and a process that runs dry takes the
# other's last tests (worksteal), so no long test starts last. The system tests marked `alone` (a tight
# margin against the wall clock) run after them, one at a time.
workers=(-n 2 --dist worksteal)
# The system tests wait on the wall clock and DDS (launches, nodes at real time): beside two of
# their processes the CPU was idle 25-50 % of the time (vmstat), and a third fills it (Jazzy's,
# every test: 360 -> 261 s on 2 cores). The package tests keep two: they are CPU-bound (4 % idle
# with three, and hardly faster).
system_workers=(-n 3 --dist worksteal)
# One OpenBLAS thread per process: with two test processes on two cores, its thread pool only
# spins (the calibration tests: about the same wall time, 8 % less CPU, identical results).
export OPENBLAS_NUM_THREADS=1
shared="${marks:+$marks and }not alone"
alone="${marks:+$marks and }alone"
colcon_marks=()  # colcon hands the arguments on in PYTEST_ADDOPTS, where -m '' is lost
[ -n "$marks" ] && colcon_marks=(-m "$marks")
rm -rf "$results" && mkdir -p "$results"
# A test over its time limit leaves its process's stacks there (wheelsim/testing/time_limit.py),
# printed again at the end.
export WHEELSIM_TEST_HANG_DIR="$results"
# make setup compiled the kernels ahead of time: their tests fail, not skip, without them.
export WHEELSIM_TEST_REQUIRE_AHEAD_OF_TIME=1
# What the tests and the nodes they start write to temporary files and ROS logs (pytest's
# tmp_path, NodeProcess folders, launch_ros's launch_params_* files, Ray's session folders, the
# ROS 2 log files of every node and launch) goes into one folder per run, removed at the end: a
# test run leaves nothing behind in the temporary folder or ~/.ros/log. The DDS domain
# reservations stay in /tmp/wheelsim-ros-domains, which every run shares.
scratch="$(mktemp -d -t wheelsim-test-XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
export TMPDIR="$scratch" ROS_LOG_DIR="$scratch/ros-log"

# Stock Nav2 end to end (tier all), with the Nav2 `make setup` found (tools/nav2_env.sh; a ROS
# install's own Nav2 is already sourced): in a shell of its own, since Nav2's prefix replaces
# tf2_msgs and tf2_ros on the paths. Without a Nav2 the tests say why in the summary. First: at
# real time they leave one core of two idle for about four minutes, which `make ci` gives to
# Kilted's set-up (tools/ci.sh).
nav2_status=0
reports=()
if [ "$tier" = all ]; then
  (
    set +u
    # shellcheck disable=SC1091
    source tools/nav2_env.sh 2>/dev/null
    python -m pytest -q -p no:cacheprovider --strict-markers "${order[@]}" test/nav2 \
      --junitxml="$results/nav2.xml"
  )
  nav2_status=$?
  reports=("$results/nav2.xml")
else
  echo "[test] stock Nav2 end to end and the marked long tests: make test-all"
fi

# colcon runs `python -m pytest` in src/wheelsim, which would import the package from there (the
# working folder first on sys.path): numba files each kernel under the folder its module was
# imported from, so the tests and the nodes they start would compile every kernel again instead
# of loading what set-up compiled for install/<distro> (Python 3.11+ honours PYTHONSAFEPATH).
PYTHONSAFEPATH=1 colcon --log-base "log/$distro" test --base-paths src --packages-select wheelsim \
  --build-base "build/$distro" --install-base "install/$distro" \
  --return-code-on-test-failure --event-handlers console_direct+ \
  --pytest-args -q -p no:cacheprovider --strict-markers "${order[@]}" "${colcon_marks[@]}" \
  "${workers[@]}"
colcon_status=$?

python -m pytest -q -p no:cacheprovider --strict-markers "${order[@]}" -m "$shared" \
  "${system_workers[@]}" test --ignore=test/nav2 --junitxml="$results/system.xml"
system_status=$?
python -m pytest -q -p no:cacheprovider --strict-markers "${order[@]}" -m "$alone" \
  test --ignore=test/nav2 --junitxml="$results/system-alone.xml"
alone_status=$?
[ $alone_status -eq 5 ] && alone_status=0  # none in this tier
[ $alone_status -ne 0 ] && system_status=$alone_status
reports+=("build/$distro/wheelsim/pytest.xml" "$results/system.xml" "$results/system-alone.xml")

python tools/junit_summary.py "${reports[@]}"
summary_status=$?
for dump in "$results"/hung-test-*.txt; do
  grep -qs '^Timeout (' "$dump" || continue  # a process crashed or killed leaves no dump
  echo "[test] a test ran over its time limit and its process was ended ($dump):"
  cat "$dump"
  summary_status=1
done

if [ $colcon_status -ne 0 ] || [ $system_status -ne 0 ] || [ $nav2_status -ne 0 ] \
    || [ $summary_status -ne 0 ]; then
  echo "TESTS FAILED on $distro (colcon test: $colcon_status, system tests: $system_status," \
    "Nav2 tests: $nav2_status, summary: $summary_status)"
  exit 1
fi
