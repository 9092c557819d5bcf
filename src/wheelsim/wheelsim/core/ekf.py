"""Extended Kalman filter of a planar pose fusing odometry increments with absolute pose fixes.

State: ``map_T_base = (x [m], y [m], yaw [rad])`` in the map frame, with its 3x3 covariance.

- Predict with a body-frame odometry increment ``u = (dx, dy, dyaw)`` of covariance ``Q``:
  ``x <- x * u`` (SE(2) composition), ``P <- F P F^T + G Q G^T`` with ``F``, ``G`` the Jacobians
  of the composition with respect to the pose and to the increment.
- Correct with a full pose fix ``z`` of covariance ``R`` (``H = I``): the innovation's yaw is
  wrapped to ``(-pi, pi]``; the gain comes from a Cholesky solve of ``S = P + R``; the covariance
  update is the Joseph form ``(I - K) P (I - K)^T + K R K^T``, symmetric and positive
  semi-definite even with rounding.

Inputs are checked: a non-finite value raises ``ValueError`` before it can reach the state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray

from wheelsim.core.localization_se2 import compose, compose_jacobians, wrap_angle, wrap_float

FloatArray = NDArray[np.float64]


def checked_pose(name: str, value: ArrayLike) -> FloatArray:
    """``value`` as a finite ``(x, y, yaw)`` array with wrapped yaw, else ``ValueError``."""
    pose = np.asarray(value, dtype=float)
    if pose.shape != (3,) or not all(math.isfinite(v) for v in pose.tolist()):
        raise ValueError(f'{name} = {value!r} must be three finite numbers (x, y, yaw)')
    x_m, y_m, yaw_rad = pose.tolist()
    return np.array([x_m, y_m, wrap_float(yaw_rad)])


def checked_covariance(name: str, value: ArrayLike) -> FloatArray:
    """``value`` as a finite, symmetric, positive semi-definite 3x3 matrix, else ``ValueError``."""
    matrix = np.asarray(value, dtype=float)
    if matrix.shape != (3, 3) or not np.all(np.isfinite(matrix)):
        raise ValueError(f'{name} must be a 3x3 matrix of finite numbers, got {value!r}')
    scale = max(float(np.max(np.abs(matrix))), 1e-300)
    if float(np.max(np.abs(matrix - matrix.T))) > 1e-9 * scale:
        raise ValueError(f'{name} must be symmetric, got {matrix.tolist()}')
    if float(np.min(np.linalg.eigvalsh(matrix))) < -1e-9 * scale:
        raise ValueError(f'{name} must be positive semi-definite, got {matrix.tolist()}')
    return 0.5 * (matrix + matrix.T)


@dataclass
class PoseEkf:
    """The filter state; construct with :meth:`from_pose`."""

    pose: FloatArray
    covariance: FloatArray

    @classmethod
    def from_pose(cls, pose: ArrayLike, covariance: ArrayLike) -> PoseEkf:
        """A filter initialised at ``pose`` with ``covariance`` (validated)."""
        return cls(
            checked_pose('initial pose', pose), checked_covariance('initial covariance', covariance)
        )

    def predict(self, increment: ArrayLike, increment_covariance: ArrayLike) -> None:
        """Move the estimate by the body-frame odometry increment (covariance ``Q``)."""
        u = checked_pose('odometry increment', increment)
        q = checked_covariance('odometry increment covariance', increment_covariance)
        j_pose, j_increment = compose_jacobians(self.pose, u)
        covariance = j_pose @ self.covariance @ j_pose.T + j_increment @ q @ j_increment.T
        self.pose = compose(self.pose, u)
        self.covariance = 0.5 * (covariance + covariance.T)

    def correct(self, measured_pose: ArrayLike, measurement_covariance: ArrayLike) -> FloatArray:
        """Fuse an pose fix of covariance ``R`` (positive definite); return the innovation."""
        z = checked_pose('pose measurement', measured_pose)
        r = checked_covariance('pose measurement covariance', measurement_covariance)
        innovation = z - self.pose
        innovation[2] = wrap_angle(innovation[2])
        factor = scipy.linalg.cho_factor(self.covariance + r)
        # K = P S^-1  <=>  K^T = S^-1 P (S and P symmetric)
        gain = scipy.linalg.cho_solve(factor, self.covariance).T
        pose = self.pose + gain @ innovation
        pose[2] = wrap_angle(pose[2])
        self.pose = pose
        identity_minus_gain = np.eye(3) - gain
        covariance = identity_minus_gain @ self.covariance @ identity_minus_gain.T
        covariance += gain @ r @ gain.T
        self.covariance = 0.5 * (covariance + covariance.T)
        return innovation
