"""Teleoperation: two-stick (tank, arcade) mappings and the wheel_teleop node's settings."""
