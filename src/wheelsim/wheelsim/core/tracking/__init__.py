"""Tracking: feedforward, pure pursuit and Stanley laws, limits, and the loop without ROS."""
