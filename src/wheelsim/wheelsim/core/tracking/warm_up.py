"""Load the compiled kernels of a control step now, not at the first step.

numba loads a kernel from its cache (or compiles it) at its first call with each set of argument
types. The ``controller`` node calls :func:`warm_up` when it is built, so that its first control
step (inside a lock-step run's timed loop, say) does not pay for that; so does
:mod:`wheelsim.core.warm_up`, which the Docker image runs so that the cache ships with it.
"""

from __future__ import annotations

from wheelsim.core.geometry.se2 import integrate_twist
from wheelsim.core.planning.trajectory import trajectory_from_poses
from wheelsim.core.tracking.config import OutputLimitsConfig
from wheelsim.core.tracking.limits import limit_twist
from wheelsim.core.tracking.reference import ZERO_TWIST, PathProgress


def warm_up() -> None:
    """Call every kernel of a control step once, with the argument types the controller uses:
    the trajectory lookups, the path search (near a point and over the path), the output limits
    and the pose prediction (:func:`~wheelsim.core.geometry.se2.integrate_twist`)."""
    trajectory = trajectory_from_poses([0.0, 1.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0])
    trajectory.at_time(0.5)
    trajectory.value_at_arc_length(0.5, 't_s')
    progress = PathProgress(trajectory)
    progress.nearest(0.5, 0.0)  # over the path
    progress.nearest(0.5, 0.0)  # near the previous point
    limits = OutputLimitsConfig(max_linear_x=1.0, max_linear_y=1.0, max_angular_z=1.0,
                                max_linear_acceleration=1.0)
    limit_twist(ZERO_TWIST, ZERO_TWIST, 0.05, limits, False, 0.0)
    integrate_twist(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

