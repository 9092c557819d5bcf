#!/usr/bin/env bash
# Set up everything `make demo` and `make test` need, skipping what is already done.
#
# Without a sourced ROS 2 (no ROS_DISTRO): a virtual environment .venv/<distro> with the ROS 2
# wheels of WHEELSIM_DISTRO (jazzy by default, or kilted) from PyPI, a generated tf2_msgs (PyPI
# has none) in .deps/<distro>/, then `colcon build` of the workspace into install/<distro>.
# With ROS 2 Jazzy or Kilted sourced: only `colcon build` (plus the Python packages the system
# lacks, installed for the user with pip if missing).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python_bin="${PYTHON:-python3}"

log() { printf '[setup] %s\n' "$*"; }
fail() { printf '[setup] error: %s\n' "$*" >&2; exit 2; }

if [ -n "${ROS_DISTRO:-}" ] && [ -n "${WHEELSIM_DISTRO:-}" ] && [ "$ROS_DISTRO" != "$WHEELSIM_DISTRO" ]; then
  fail "DISTRO/WHEELSIM_DISTRO is $WHEELSIM_DISTRO but ROS 2 $ROS_DISTRO is sourced: use a shell without ROS sourced, or drop DISTRO"
fi
distro="${ROS_DISTRO:-${WHEELSIM_DISTRO:-jazzy}}"
venv="$root/.venv/$distro"
deps="$root/.deps/$distro"
requirements="tools/requirements-$distro.txt"

fix_wheel_cmake_paths() {
  # The wheels' CMake export files name the build host's Python paths, and numpy 2's include
  # folder (numpy/_core/include; numpy 1.x has numpy/core/include): point them at ours.
  local include purelib numpy_include
  include="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  purelib="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  numpy_include="$("$venv/bin/python" -c 'import numpy; print(numpy.get_include())')"
  grep -rlE '/opt/python/cp3[0-9]+-cp3[0-9]+|site-packages/numpy/_core/include' "$venv/share" \
      --include='*.cmake' 2>/dev/null \
    | xargs -r sed -i -E \
      -e "s#/opt/python/cp3[0-9]+-cp3[0-9]+/include/python3\.[0-9]+#${include}#g" \
      -e "s#/opt/python/cp3[0-9]+-cp3[0-9]+/lib/python3\.[0-9]+/site-packages#${purelib}#g" \
      -e "s#[^;\"]*/site-packages/numpy/_core/include#${numpy_include}#g" \
    || true
}

setup_venv() {
  local stamp="$venv/.wheelsim-requirements"
  if [ -f "$stamp" ] && cat "$requirements" tools/requirements-common.txt | cmp -s "$stamp" -; then
    return
  fi
  log "creating $venv with the ROS 2 $distro wheels from PyPI (first run only, 15 s plus downloads)"
  [ -x "$venv/bin/python" ] || "$python_bin" -m venv "$venv"
  # uv (from PyPI, into the venv) fetches and unpacks the wheels in parallel: the venv in
  # 23-33 s where pip took 71-82 s on a fresh 2-core machine, downloads included (BENCHMARKS.md).
  # It trusts the system's certificate store, as apt and curl do. pip where uv does not install
  # or fails (uv reads no pip.conf: a PyPI mirror or certificate named only there).
  # Python writes a module's bytecode at its first import; where PYTHONDONTWRITEBYTECODE forbids
  # that, uv compiles the wheels' bytecode now (pip always does), or every process would compile
  # its imports again (importing vehicle_sim took 3.3 s of CPU instead of 1.3).
  local compile=()
  [ -n "${PYTHONDONTWRITEBYTECODE:-}" ] && compile=(--compile-bytecode)
  if "$venv/bin/python" -m pip install --quiet uv==0.13.9 2>>"$deps/pip.log" \
      && "$venv/bin/uv" pip install --quiet --system-certs "${compile[@]}" \
        --python "$venv/bin/python" -r "$requirements" 2>>"$deps/pip.log"; then
    :
  else
    log "uv failed (see $deps/pip.log): installing with pip"
    "$venv/bin/python" -m pip install --quiet -r "$requirements" 2>>"$deps/pip.log" \
      || { log "pip install failed; see $deps/pip.log"; tail -n 20 "$deps/pip.log"; exit 1; }
  fi
  fix_wheel_cmake_paths
  cat "$requirements" tools/requirements-common.txt > "$stamp"
}

build_tf2_msgs() {
  # Built only when no tf2_msgs is importable (a system ROS install has the real one).
  if python -c 'import tf2_msgs.msg' 2>/dev/null; then
    return
  fi
  log "generating tf2_msgs into $deps (first run only)"
  local include
  include="$(python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  (
    export CMAKE_PREFIX_PATH="$venv${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
    export AMENT_PREFIX_PATH="$venv${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
    colcon --log-base "$deps/log" build --base-paths tools/tf2_msgs \
      --build-base "$deps/build" --install-base "$deps/install" \
      --cmake-args -DPython3_EXECUTABLE="$venv/bin/python" -DPython3_INCLUDE_DIR="$include" \
      -DBUILD_TESTING=OFF >"$deps/build.log" 2>&1
  ) || { log "tf2_msgs generation failed; see $deps/build.log"; tail -n 30 "$deps/build.log"; exit 1; }
}

mkdir -p "$deps"
if [ -n "${ROS_DISTRO:-}" ]; then
  log "using the sourced ROS 2 $ROS_DISTRO"
  missing=$(python3 - <<'PYEOF'
import importlib.util
mods = {'numba': 'numba', 'mcap_ros2': 'mcap-ros2-support', 'mcap': 'mcap', 'hypothesis': 'hypothesis',
        'ruff': 'ruff', 'urdf_parser_py': 'urdf-parser-py', 'rosbags': 'rosbags', 'tqdm': 'tqdm',
        'rsplan': 'rsplan==1.0.10', 'vehiclemodels': 'commonroad-vehicle-models==3.0.2',
        'ray': 'ray==2.60.0', 'optuna': 'optuna==5.0.0', 'pyarrow': 'pyarrow==25.0.0',
        'gymnasium': 'gymnasium==1.4.0',
        'random_order': 'pytest-random-order', 'xdist': 'pytest-xdist'}
print(' '.join(pkg for mod, pkg in mods.items() if importlib.util.find_spec(mod) is None))
PYEOF
)
  if [ -n "$missing" ]; then
    log "installing for the user with pip: $missing"
    python3 -m pip install --user --quiet $missing || python3 -m pip install --user --quiet --break-system-packages $missing
  fi
else
  [ -f "$requirements" ] || fail "WHEELSIM_DISTRO=$distro is not supported: use jazzy or kilted"
  setup_venv
fi

set +u  # the sourced setup files use unset variables
# shellcheck disable=SC1091
WHEELSIM_DISTRO="$distro" source "$root/env.sh"
set -u
log "building the workspace with colcon ($distro)"
if [ -z "${ROS_DISTRO:-}" ]; then
  # env.sh sets up every path the venv set-up needs: no other prefix (a Nav2 sourced through
  # tools/nav2_env.sh, an earlier build's chain) becomes an underlay of install/<distro>.
  unset COLCON_PREFIX_PATH
fi
colcon --log-base "log/$distro" build --base-paths src --symlink-install \
  --build-base "build/$distro" --install-base "install/$distro" >"$deps/colcon-build.log" 2>&1 \
  || { log "colcon build failed; see $deps/colcon-build.log"; tail -n 40 "$deps/colcon-build.log"; exit 1; }
# The package's bytecode, compiled now for the same reason as the wheels' (setup_venv): with
# PYTHONDONTWRITEBYTECODE set, every `wheelsim run`, node and test process compiled wheelsim's
# modules again (0.3 s of CPU each). Only what changed since the last set-up is compiled; with
# --symlink-install the package folder is src/wheelsim/wheelsim, so it lands beside the sources.
python -m compileall -q --invalidation-mode timestamp "build/$distro/wheelsim/wheelsim" \
  >"$deps/compileall.log" 2>&1 \
  || { log "compiling wheelsim's bytecode failed; see $deps/compileall.log"; tail -n 20 "$deps/compileall.log"; exit 1; }

# The compiled kernels (numba, cached on disk beside the sources), and the same compiled ahead
# of time into modules that processes load without numba (0.8 s of CPU less at every node,
# launch and run start; not for `make demo`: WHEELSIM_AHEAD_OF_TIME=0): compiled on the first
# run, loaded after, so that no node, test or demo compiles them while it runs (cold, that took
# longer than a launch test's window on 2 busy cores). numba files a kernel under the folder its
# module was imported from, so they load after the build, imported as the nodes and tests
# import them. Compiling is single-threaded: the nodes' kernels load in two processes
# themselves, the report's beside them, and the rest of the set-up goes on meanwhile. Each part
# is shown as it starts (stdout); numba's messages go to the log.
log "loading the compiled kernels (compiled on the first run only: 20-50 s on 2 cores)"
WHEELSIM_DISTRO="$distro" bash -c 'set +u; source env.sh >/dev/null 2>&1; set -e
  python -m wheelsim.report.warm_up & report=$!
  python -m wheelsim.core.warm_up; wait $report' 2>"$deps/warm-up.log" \
  | sed -u 's/^wheelsim: /[setup] /' &
kernels=$!
trap 'kill $kernels 2>/dev/null || true' EXIT

if [ -z "${ROS_DISTRO:-}" ]; then
  build_tf2_msgs
  # The launch tooling (launch, launch_ros, launch_run) of ../shared/ros-launch where it exists
  # beside the project: the launch tests then run every launch file for real instead of skipping.
  harness="$root/../shared/ros-launch/install.sh"
  if [ -f "$harness" ]; then
    bash "$harness" "$venv" "$distro" --without-testing >"$deps/ros-launch.log" 2>&1 \
      || { log "installing $harness failed; see $deps/ros-launch.log"; exit 1; }
  else
    log "launch files: no ../shared/ros-launch beside the project: ros2 launch needs a ROS" \
        "install (or docker compose); the launch tests skip, saying so"
  fi
  # Nav2 for the end-to-end tests (tools/nav2_prefix.sh): a prefix named by
  # WHEELSIM_NAV2_PREFIX, or the packed Jazzy prefix of ../shared/nav2 unpacked into .deps.
  bash "$root/tools/nav2_prefix.sh" "$distro"
fi

wait $kernels \
  || { log "compiling the kernels failed; see $deps/warm-up.log"; tail -n 40 "$deps/warm-up.log"; exit 1; }
