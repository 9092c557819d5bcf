"""Shared fixtures: every test that starts ROS nodes takes `ros_domain_id` (a reserved domain)."""

import pytest

from wheelsim.testing.fixtures import (  # noqa: F401 - fixtures
    load_hypothesis_profile,
    probe,
    register_markers,
    ros_domain_id,
    start_long_tests_first,
)


def pytest_configure(config):
    register_markers(config)
    load_hypothesis_profile()


@pytest.hookimpl(trylast=True)  # after pytest-random-order's shuffle
def pytest_collection_modifyitems(items):
    start_long_tests_first(items)
