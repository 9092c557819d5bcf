"""The Nav2 end-to-end tests: run with a Nav2 sourced (tools/run_tests.sh sources
tools/nav2_env.sh for them, or a ROS install's Nav2)."""

from wheelsim.testing.fixtures import register_markers, ros_domain_id  # noqa: F401 - fixture
from wheelsim.testing.time_limit import limit_test_phases


def pytest_configure(config):
    register_markers(config)
    limit_test_phases(config)
