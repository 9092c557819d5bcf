"""Calibration: fit a vehicle's actuator parameters (and its geometry where observable) to a
recording of commands and measured motion (``wheelsim calibrate``)."""
