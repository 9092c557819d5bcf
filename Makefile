# Two commands do all the set-up on a fresh machine (no ROS install needed):
#   make demo   runs the built-in default scenario
#   make test   runs every test
# Each creates .venv/<distro> with the ROS 2 wheels of DISTRO (jazzy by default; `make test
# DISTRO=kilted` for Kilted), generates tf2_msgs if needed and builds with colcon.
.PHONY: setup demo test lint clean

DISTRO ?= jazzy
export WHEELSIM_DISTRO := $(DISTRO)

setup:
	@bash tools/bootstrap.sh

demo: setup
	@bash tools/demo.sh

test: setup
	@bash tools/run_tests.sh

lint: setup
	@bash -c 'source env.sh && ruff check src test bench tools launch'

clean:
	rm -rf build install log .deps results
