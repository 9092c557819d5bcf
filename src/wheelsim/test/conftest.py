"""Shared fixtures: every test that starts ROS nodes takes `ros_domain_id` (a reserved domain),
or `probe` (a probe node on one)."""

from wheelsim.testing.fixtures import probe, ros_domain_id  # noqa: F401 - re-exported fixtures
