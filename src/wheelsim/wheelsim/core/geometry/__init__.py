"""Angles and planar rigid motion (SE(2)): wrapping, poses, composition, twist integration;
3-D rotations as KDL computes them (robot_state_publisher's poses)."""
