"""The vehicle: configuration, wheel kinematics, actuators, compiled stepping, joints and URDF."""
