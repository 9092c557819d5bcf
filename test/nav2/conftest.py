"""The Nav2 end-to-end tests: run with a Nav2 sourced (tools/run_tests.sh sources
tools/nav2_env.sh for them, or a ROS install's Nav2). Every test here is marked ``nav2`` and,
where no Nav2 can run, skipped with the reason."""

from pathlib import Path

import pytest

from wheelsim.testing.fixtures import register_markers, ros_domain_id  # noqa: F401 - fixture
from wheelsim.testing.nav2 import nav2_problem
from wheelsim.testing.time_limit import limit_test_phases

HERE = Path(__file__).resolve().parent


def pytest_configure(config):
    register_markers(config)
    limit_test_phases(config)


def pytest_collection_modifyitems(items):
    problem = nav2_problem()
    for item in items:
        if Path(item.path).resolve().parent == HERE:
            item.add_marker(pytest.mark.nav2)
            if problem is not None:
                item.add_marker(pytest.mark.skip(reason=problem))
