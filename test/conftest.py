"""Shared fixtures: every test that starts ROS nodes takes `ros_domain_id` (a reserved domain)."""

from wheelsim.testing.fixtures import ros_domain_id  # noqa: F401 - re-exported fixture
