"""The controller's feedforward law (Kanayama et al. 1990) as a policy on the path-tracking
observation: a policy written for wheelsim.sim.PathTrackingEnv that the controller runs in the
ROS loop unchanged (``algorithm: policy``, ``policy.callable: feedforward_policy:policy``, this
folder on PYTHONPATH).

    PYTHONPATH=examples:$PYTHONPATH wheelsim run examples/policy_figure_eight.yaml

The observation gives the errors at the nearest path point; the law wants the scheduled point
in the body frame. On a straight stretch the scheduled point lies ``-along_track_m`` along the
path and ``-cross_track_m`` across it, which rotated by the heading error gives the body-frame
error; on a curve that is exact to first order in the errors. The planned twist to drive with
is the observation's ``reference_*`` (``lead_time`` ahead on the schedule, as the controller's
law takes it). Differential and bicycle vehicles: the action is ``(vx_mps, wz_radps)``.
"""

import numpy as np

#: The controller's default gains (feedforward.k_x [1/s], k_y [1/m^2], k_theta [1/s]).
K_X, K_Y, K_THETA = 1.0, 1.0, 2.0


def policy(observation: np.ndarray) -> np.ndarray:
    """(..., 10) observations -> (..., 2) actions (vx_mps, wz_radps)."""
    (cross_m, heading_rad, along_m, _, _, _, _, reference_vx_mps, _,
     reference_wz_radps) = np.moveaxis(observation, -1, 0)
    cos_h, sin_h = np.cos(heading_rad), np.sin(heading_rad)
    error_x_m = -cos_h * along_m - sin_h * cross_m  # scheduled point in the body frame
    error_y_m = sin_h * along_m - cos_h * cross_m
    vx_mps = reference_vx_mps * cos_h + K_X * error_x_m  # cos(-h) = cos(h)
    wz_radps = (reference_wz_radps + reference_vx_mps * K_Y * error_y_m
                - K_THETA * sin_h)  # sin(-h) = -sin(h)
    return np.stack([vx_mps, wz_radps], axis=-1)
