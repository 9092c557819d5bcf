"""vehicle_sim's loop without ROS: node settings, the step grid and event schedule, command age."""
