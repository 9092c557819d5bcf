"""Shared fixtures: every test that starts ROS nodes takes `ros_domain_id` (a reserved domain)."""

from wheelsim.testing.fixtures import probe, register_markers, ros_domain_id  # noqa: F401 - fixtures


def pytest_configure(config):
    register_markers(config)
