"""Planning: waypoints, smooth and curvature-bounded paths (spline, clothoid, Dubins), timing."""
