# Two commands do all the set-up on a fresh machine (no ROS install needed):
#   make demo   runs the built-in default scenario
#   make ci     runs every test as CI does (.ci/run): every test on Jazzy, the quick tier on Kilted
# `make test` runs the quick tier: every test that guards behaviour but the marked long ones
# (soak, cluster, slow) and stock Nav2 end to end.
# Each creates .venv/<distro> with the ROS 2 wheels of DISTRO (jazzy by default; `make test
# DISTRO=kilted` for Kilted), generates tf2_msgs if needed and builds with colcon.
.PHONY: setup demo test test-all ci lint clean

DISTRO ?= jazzy
export WHEELSIM_DISTRO := $(DISTRO)

setup:
	@bash tools/bootstrap.sh

# The demo's set-up leaves the kernels to numba's JIT (the first demo 35 s sooner); `make setup`
# and the tests also compile them ahead of time.
demo: export WHEELSIM_AHEAD_OF_TIME := 0
demo: setup
	@bash tools/demo.sh

test: setup
	@WHEELSIM_TEST_TIER=quick bash tools/run_tests.sh

test-all: setup
	@WHEELSIM_TEST_TIER=all bash tools/run_tests.sh

# Both distros, each set up as it goes: tools/ci.sh.
ci:
	@if [ "$(origin DISTRO)" != file ]; then \
	  echo "make ci runs both Jazzy and Kilted: DISTRO=$(DISTRO) cannot choose one" >&2; exit 2; fi
	@if [ -n "$${ROS_DISTRO:-}" ]; then echo "make ci sets both distros up from the PyPI wheels:" \
	  "run it in a shell without ROS 2 $${ROS_DISTRO} sourced" >&2; exit 2; fi
	+@bash tools/ci.sh

lint: setup
	@bash -c 'source env.sh && ruff check src test bench tools launch'

clean:
	rm -rf build install log .deps results
