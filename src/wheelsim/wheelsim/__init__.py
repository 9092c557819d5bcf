"""wheelsim: wheeled vehicle simulation for testing trajectory-following controllers on ROS 2."""
