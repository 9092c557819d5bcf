"""Helpers of the launch files: required packages checked first, optional tools when installed."""
