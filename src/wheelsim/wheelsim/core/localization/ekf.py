"""Extended Kalman filter of a planar pose fusing odometry increments with absolute pose fixes.

State: ``map_T_base = (x [m], y [m], yaw [rad])`` in the map frame, with its 3x3 covariance.

- Predict with a body-frame odometry increment ``u = (dx, dy, dyaw)`` of covariance ``Q``:
  ``x <- x * u`` (SE(2) composition), ``P <- F P F^T + G Q G^T`` with ``F``, ``G`` the Jacobians
  of the composition with respect to the pose and to the increment.
- Correct with a full pose fix ``z`` of covariance ``R`` (``H = I``): the innovation's yaw is
  wrapped to ``(-pi, pi]``; the gain comes from a Cholesky solve of ``S = P + R``; the covariance
  update is the Joseph form ``(I - K) P (I - K)^T + K R K^T``, symmetric and positive
  semi-definite even with rounding.

``Q`` and ``R`` are 3x3 matrices (:meth:`PoseEkf.predict`, :meth:`PoseEkf.correct`) or, for
independent errors, their diagonals (:meth:`PoseEkf.predict_diagonal`,
:meth:`PoseEkf.correct_diagonal`: the localization's noise models, with no matrix to validate per
sample).  Inputs are checked: a non-finite value raises ``ValueError`` before it can reach the
state.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from wheelsim.core.arrays import FloatArray
from wheelsim.core.compiled import jitable
from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import Floats3, compose_floats, compose_jacobians

#: Largest magnitude of any input number: vehicle_sim keeps poses within 1e9 m and commands
#: within 1e6; beyond, sums and products could overflow to inf (and inf - inf to NaN).
MAX_MAGNITUDE = 1e9


@jitable
def is_within_magnitude(first: float, second: float, third: float) -> bool:
    """Whether the three numbers are finite of magnitude at most :data:`MAX_MAGNITUDE`."""
    return abs(first) <= MAX_MAGNITUDE and abs(second) <= MAX_MAGNITUDE and (
        abs(third) <= MAX_MAGNITUDE)  # False for NaN too


def checked_floats(name: str, value: ArrayLike, components: str) -> Floats3:
    """``value`` as three finite floats of magnitude at most :data:`MAX_MAGNITUDE`, else
    ``ValueError`` naming ``name`` and the three ``components`` (e.g. ``'x, y, yaw'``)."""
    if type(value) is tuple and len(value) == 3 and (
            type(value[0]) is type(value[1]) is type(value[2]) is float):
        values = value  # three floats already (each sample's case): what numpy would give
    else:
        array = np.asarray(value, dtype=float)
        values = array.tolist() if array.shape == (3,) else ()
    if len(values) == 3:
        first, second, third = values
        if is_within_magnitude(first, second, third):
            return first, second, third
    raise invalid_floats(name, value, components)


def invalid_floats(name: str, value: object, components: str) -> ValueError:
    """The error of :func:`checked_floats` for ``value``."""
    return ValueError(f'{name} = {value!r} must be three finite numbers ({components}) of '
                      f'magnitude at most {MAX_MAGNITUDE:g}')


def checked_pose(name: str, value: ArrayLike) -> Floats3:
    """``value`` as finite floats ``(x [m], y [m], yaw [rad])`` with the yaw wrapped to
    ``(-pi, pi]``, else ``ValueError``."""
    x_m, y_m, yaw_rad = checked_floats(name, value, 'x, y, yaw')
    return x_m, y_m, wrap_angle(yaw_rad)


def checked_variances(name: str, value: ArrayLike, components: str) -> Floats3:
    """``value`` as three finite variances >= 0 (the diagonal of a covariance of independent
    errors), else ``ValueError``."""
    variances = checked_floats(name, value, components)
    if min(variances) < 0.0:
        raise ValueError(f'{name} = {value!r} must be >= 0')
    return variances


def diagonal_covariance(variances: Sequence[float]) -> FloatArray:
    """The 3x3 covariance of independent errors of these three ``variances``: what
    ``np.diag`` gives, for half its cost (the localization makes one per sample)."""
    covariance = np.zeros((3, 3))
    covariance.flat[::4] = variances
    return covariance


def checked_covariance(name: str, value: ArrayLike) -> FloatArray:
    """``value`` as a finite, symmetric, positive semi-definite 3x3 matrix, else ``ValueError``."""
    matrix = np.asarray(value, dtype=float)
    if matrix.shape != (3, 3) or not np.all(np.isfinite(matrix)):
        raise ValueError(f'{name} must be a 3x3 matrix of finite numbers, got {value!r}')
    scale = max(float(np.max(np.abs(matrix))), 1e-300)
    with np.errstate(over='ignore'):  # entries near the largest float: an inf difference
        asymmetry = float(np.max(np.abs(matrix - matrix.T)))
    if asymmetry > 1e-9 * scale:
        raise ValueError(f'{name} must be symmetric, got {matrix.tolist()}')
    if float(np.min(np.linalg.eigvalsh(matrix))) < -1e-9 * scale:
        raise ValueError(f'{name} must be positive semi-definite, got {matrix.tolist()}')
    return 0.5 * matrix + 0.5 * matrix.T  # halves first: no overflow near the largest float


@dataclass
class PoseEkf:
    """The filter state; construct with :meth:`from_pose`."""

    pose: FloatArray
    covariance: FloatArray

    @classmethod
    def from_pose(cls, pose: ArrayLike, covariance: ArrayLike) -> PoseEkf:
        """A filter initialised at ``pose`` with ``covariance`` (validated)."""
        return cls(
            np.array(checked_pose('initial pose', pose)),
            checked_covariance('initial covariance', covariance),
        )

    def is_finite(self) -> bool:
        """Whether the pose and the covariance are finite (an estimate that can be published)."""
        return bool(np.all(np.isfinite(self.pose)) and np.all(np.isfinite(self.covariance)))

    def predict(self, increment: ArrayLike, increment_covariance: ArrayLike) -> None:
        """Move the estimate by the body-frame odometry increment (covariance ``Q``)."""
        u = checked_pose('odometry increment', increment)
        q = checked_covariance('odometry increment covariance', increment_covariance)
        self._predict(u, q)

    def predict_diagonal(self, increment: ArrayLike, increment_variances: ArrayLike) -> None:
        """:meth:`predict` with independent errors: ``Q = diag(increment_variances)``
        ``(dx [m^2], dy [m^2], dyaw [rad^2])``, each finite and >= 0."""
        u = checked_pose('odometry increment', increment)
        variances = checked_variances(
            'odometry increment variances', increment_variances, 'dx, dy, dyaw'
        )
        self._predict(u, diagonal_covariance(variances))

    def _predict(self, u: Floats3, q: FloatArray) -> None:
        j_pose, j_increment = compose_jacobians(self.pose, u)
        covariance = j_pose @ self.covariance @ j_pose.T + j_increment @ q @ j_increment.T
        self.pose = np.array(compose_floats(self.pose.tolist(), u))
        self.covariance = 0.5 * (covariance + covariance.T)

    def correct(self, measured_pose: ArrayLike, measurement_covariance: ArrayLike) -> FloatArray:
        """Fuse an pose fix of covariance ``R`` (positive definite); return the innovation."""
        z = checked_pose('pose measurement', measured_pose)
        r = checked_covariance('pose measurement covariance', measurement_covariance)
        return self._correct(z, r)

    def correct_diagonal(
        self, measured_pose: ArrayLike, measurement_variances: ArrayLike
    ) -> FloatArray:
        """:meth:`correct` with independent errors: ``R = diag(measurement_variances)``
        ``(x [m^2], y [m^2], yaw [rad^2])``, each finite and >= 0."""
        z = checked_pose('pose measurement', measured_pose)
        variances = checked_variances(
            'pose measurement variances', measurement_variances, 'x, y, yaw'
        )
        return self._correct(z, diagonal_covariance(variances))

    def _correct(self, z: Floats3, r: FloatArray) -> FloatArray:
        import scipy.linalg  # on first use: docs/architecture.md

        innovation = np.array(z) - self.pose
        innovation[2] = wrap_angle(float(innovation[2]))
        factor = scipy.linalg.cho_factor(self.covariance + r)
        # K = P S^-1  <=>  K^T = S^-1 P (S and P symmetric)
        gain = scipy.linalg.cho_solve(factor, self.covariance).T
        pose = self.pose + gain @ innovation
        pose[2] = wrap_angle(float(pose[2]))
        self.pose = pose
        identity_minus_gain = np.eye(3) - gain
        covariance = identity_minus_gain @ self.covariance @ identity_minus_gain.T
        covariance += gain @ r @ gain.T
        self.covariance = 0.5 * (covariance + covariance.T)
        return innovation
