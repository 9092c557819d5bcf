"""SE(2) composition, inversion and Jacobians against analytic answers and finite differences."""

import numpy as np

from wheelsim.core.geometry.angles import wrap_angles
from wheelsim.core.geometry.se2 import compose, compose_jacobians, inverse, relative

POSES = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.7], [-3.5, 0.25, -2.9], [0.1, 4.0, 3.1]])


def test_compose_analytic():
    # Drive 1 m forward after turning left by 90 degrees at (1, 0).
    np.testing.assert_allclose(
        compose([1.0, 0.0, np.pi / 2], [1.0, 0.0, 0.0]), [1.0, 1.0, np.pi / 2]
    )
    np.testing.assert_allclose(
        compose([1.0, 2.0, np.pi / 2], [0.0, 1.0, np.pi / 2]), [0.0, 2.0, np.pi]
    )


def test_inverse_and_relative_are_consistent():
    for a in POSES:
        np.testing.assert_allclose(compose(a, inverse(a)), [0.0, 0.0, 0.0], atol=1e-12)
        for b in POSES:
            np.testing.assert_allclose(relative(a, compose(a, b)), b, atol=1e-12)
    # Broadcasting over leading axes gives the same as one by one.
    batch = relative(POSES[:, None, :], POSES[None, :, :])
    for i, a in enumerate(POSES):
        for j, b in enumerate(POSES):
            np.testing.assert_allclose(batch[i, j], relative(a, b), atol=1e-12)


def test_compose_jacobians_match_finite_differences():
    step = 1e-6
    for a in POSES:
        for b in POSES:
            j_first, j_second = compose_jacobians(a, b)
            for k in range(3):
                delta = np.zeros(3)
                delta[k] = step
                diff_first = (compose(a + delta, b) - compose(a - delta, b)) / (2 * step)
                diff_second = (compose(a, b + delta) - compose(a, b - delta)) / (2 * step)
                diff_first[2] = wrap_angles(diff_first[2] * 2 * step) / (2 * step)
                diff_second[2] = wrap_angles(diff_second[2] * 2 * step) / (2 * step)
                np.testing.assert_allclose(j_first[:, k], diff_first, atol=1e-6)
                np.testing.assert_allclose(j_second[:, k], diff_second, atol=1e-6)
