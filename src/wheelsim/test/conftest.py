"""Shared fixtures: every test that starts ROS nodes takes `ros_domain_id` (a reserved domain),
or `probe` (a probe node on one)."""

import pytest

from wheelsim.testing.fixtures import (  # noqa: F401 - fixtures
    ahead_of_time_kernels,
    load_hypothesis_profile,
    probe,
    register_markers,
    ros_domain_id,
    start_long_tests_first,
)
from wheelsim.testing.time_limit import limit_test_phases


def pytest_configure(config):
    register_markers(config)
    limit_test_phases(config)
    load_hypothesis_profile()


@pytest.hookimpl(trylast=True)  # after pytest-random-order's shuffle
def pytest_collection_modifyitems(items):
    start_long_tests_first(items)
