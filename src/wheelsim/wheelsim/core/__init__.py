"""Numeric core, free of ROS: one sub-package per domain.

- :mod:`.geometry`: angles and planar rigid motion (SE(2)).
- :mod:`.vehicle`: vehicle models, actuators, compiled stepping, joints, URDF.
- :mod:`.vehicle_sim`: vehicle_sim's settings, step grid and event schedule, command age.
- :mod:`.localization`: odometry drift, map-pose noise, EKF.
- :mod:`.planning`: timed curvature-bounded paths through waypoints.
- :mod:`.tracking`: path-tracking laws and the control loop without ROS.

Shared by all: :mod:`.params` (parameter trees), :mod:`.frames` (frame-name parameters),
:mod:`.compiled` (numba), :mod:`.arrays` (array types), :mod:`.units` (nanoseconds per
second). The core imports no rclpy and no message package (a test enforces it).
"""
