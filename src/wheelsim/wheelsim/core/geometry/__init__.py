"""Angles and planar rigid motion (SE(2)): wrapping, poses, composition, twist integration."""
