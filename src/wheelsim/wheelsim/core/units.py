"""Unit conversions shared by the whole package.

ROS time is an integer count of nanoseconds (``builtin_interfaces/Time``: seconds and
nanoseconds; rclpy's ``Time.nanoseconds``); wheelsim keeps simulated time that way, exactly, and
converts to seconds only for arithmetic in floating point.
"""

NS_PER_S = 1_000_000_000
"""Nanoseconds per second (an int: ``t_ns // NS_PER_S`` and ``divmod`` stay exact)."""

MIN_RATE_HZ = 1e-3
"""The lowest rate of anything periodic (one period in 1000 s) and the smallest real-time factor
but 0: a rarer one's period overflows the wall and ROS clocks' arithmetic."""
