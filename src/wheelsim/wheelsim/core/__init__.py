"""Numeric core: vehicle models, actuators, localization and planning math. Imports no ROS."""
