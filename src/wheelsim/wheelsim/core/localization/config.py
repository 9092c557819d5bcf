"""Configuration of the localization simulator: mode, seed, frames and every noise parameter.

One frozen-dataclass declaration (see :mod:`wheelsim.core.params`) gives the ROS parameters of the
``localization`` node, their validation and their documentation.  The ``localization.*`` names,
units and defaults of the reference simulator are kept; what they mean precisely:

``localization.odom_walk_velocity_translation`` q_t [m^2/m], ``..._rotation`` q_r [rad^2/m]
    Wheel odometry integrates its measured motion increments.  An increment covering the
    distance ds [m] (straight-line length between two ground-truth samples) gets independent
    zero-mean Gaussian errors on its body-frame ``x`` and ``y`` of variance ``q_t * ds`` each and
    on its heading of variance ``q_r * ds``.  Driving a distance d therefore gives a heading
    error of variance ``q_r * d`` and, without heading error, a position error of variance
    ``q_t * d`` per axis: 0.0025 m^2/m is a 5 cm standard deviation after 1 m.
``localization.odom_walk_turn_rotation`` q_w [rad^2/rad] (new)
    Adds heading variance ``q_w * |dyaw|`` per increment that turns by ``dyaw``, so turning on
    the spot drifts too (the reference has no drift at zero distance).
``localization.map_sample_noise_translation`` S_t, ``..._rotation`` S_r
    The error of the absolute (map-frame) pose, per axis ``x``, ``y``, ``yaw``, independent of the
    odometry.  S is its noise density: the two-sided power spectral density at zero frequency, in
    m^2*s = m^2/Hz (rad^2*s for yaw; the reference labels them m^2/s and rad^2/s).  Whatever the
    rate and correlation time, the mean of the error over a long window of T seconds has the
    variance S / T: the default 2.5e-5 m^2*s is a 5 mm standard deviation averaged over 1 s.
    The error is a first-order Gauss-Markov process with correlation time tau
    (``map_noise_correlation_time``), sampled exactly at the ground-truth stamps: a unit
    process z with ``z_k = phi z_{k-1} + sqrt(1 - phi^2) w_k``, ``phi = exp(-dt / tau)``, scaled
    by ``sigma^2 = (S / dt) * tanh(dt / (2 tau))`` where dt is the time since the previous
    sample.  For regular sampling this is an AR(1) sequence whose zero-frequency density is S.
    tau = 0 gives white noise of variance S / dt per sample, exactly the reference's formula
    (3.5 cm at 50 Hz with the defaults); tau >> dt gives the continuous Gauss-Markov process of
    stationary variance S / (2 tau), independent of the publish rate.
``localization.odom_twist_noise_linear`` [(m/s)^2], ``..._angular`` [(rad/s)^2] (new)
    Variance of white noise added to each published odometry twist sample (0: exact twist).
``ekf.measurement_rate`` [Hz], ``ekf.measurement_noise_translation`` [m^2], ``..._rotation`` [rad^2]
    Mode ``ekf`` corrects with absolute pose fixes at this rate whose errors are white with
    these variances per fix (per axis).
"""

from __future__ import annotations

from dataclasses import dataclass

from wheelsim.core import frames
from wheelsim.core.localization.wheel_encoders import EncoderConfig
from wheelsim.core.params import ParameterError, group, param
from wheelsim.core.units import MIN_RATE_HZ

MODES = ('perfect', 'noisy', 'ekf')
#: The parameters of the map estimate's noise (mode ``noisy``): mode ``ekf`` takes its map
#: estimate from the filter instead.
MAP_NOISE_PARAMETERS = ('localization.map_sample_noise_translation',
                        'localization.map_sample_noise_rotation',
                        'localization.map_noise_correlation_time')
ODOMETRY_SOURCES = ('ground_truth', 'joint_states')


def unused_parameters(mode: str, odometry_source: str) -> dict[str, str]:
    """{parameter name, or ``group.`` for each of a group's: why} of the parameters the
    localization does not use with the read-only ``mode`` and ``odometry_source``."""
    unused = {}
    if mode == 'perfect':
        unused['localization.'] = 'mode perfect adds no noise (mode is read only)'
    if mode != 'ekf':
        unused['ekf.'] = f'only mode ekf uses it, and mode is {mode} (read only)'
    else:
        for name in MAP_NOISE_PARAMETERS:
            unused[name] = ('mode ekf takes its map estimate from the filter (its fixes: '
                            'ekf.measurement_*; mode is read only)')
    if odometry_source != 'joint_states':
        unused['encoders.'] = 'only odometry_source joint_states uses it (read only)'
    return unused


#: The largest noise variance a parameter takes (per metre, radian or second, or of one
#: sample): far beyond any sensor (a 10 m or 10 rad standard deviation), low enough that the
#: odometry's and the map pose's numbers stay finite and within what the node accepts.
NOISE_VARIANCE_MAX = 100.0
#: The largest variance of an EKF pose fix along x or y [m^2] (a 1 km standard deviation).
FIX_VARIANCE_MAX_M2 = 1e6


@dataclass(frozen=True)
class NoiseConfig:
    """The ``localization.*`` noise model (mode ``noisy``; mode ``ekf`` uses the odometry part)."""

    odom_walk_velocity_translation: float = param(
        0.0025,
        'Odometry drift: variance of the body-frame x and y error per metre driven.',
        unit='m^2/m',
        min_value=0.0,
        max_value=NOISE_VARIANCE_MAX,
    )
    odom_walk_velocity_rotation: float = param(
        0.0076,
        'Odometry drift: variance of the heading error per metre driven.',
        unit='rad^2/m',
        min_value=0.0,
        max_value=NOISE_VARIANCE_MAX,
    )
    odom_walk_turn_rotation: float = param(
        0.0025,
        'Odometry drift: variance of the heading error per radian turned (turning on the spot).',
        unit='rad^2/rad',
        min_value=0.0,
        max_value=NOISE_VARIANCE_MAX,
    )
    map_sample_noise_translation: float = param(
        2.5e-5,
        'Map pose noise density per axis x, y (zero-frequency PSD; variance of the 1 s mean).',
        unit='m^2*s',
        min_value=0.0,
        max_value=NOISE_VARIANCE_MAX,
    )
    map_sample_noise_rotation: float = param(
        3.1e-6,
        'Map pose noise density of the heading (zero-frequency PSD; variance of the 1 s mean).',
        unit='rad^2*s',
        min_value=0.0,
        max_value=NOISE_VARIANCE_MAX,
    )
    map_noise_correlation_time: float = param(
        0.0,
        'Correlation time of the first-order Gauss-Markov map pose noise; 0 gives white noise.',
        unit='s',
        min_value=0.0,
    )
    odom_twist_noise_linear: float = param(
        0.0,
        'Variance of white noise on the published odometry linear velocity (x and y).',
        unit='(m/s)^2',
        min_value=0.0,
        max_value=NOISE_VARIANCE_MAX,
    )
    odom_twist_noise_angular: float = param(
        0.0,
        'Variance of white noise on the published odometry yaw rate.',
        unit='(rad/s)^2',
        min_value=0.0,
        max_value=NOISE_VARIANCE_MAX,
    )


@dataclass(frozen=True)
class EkfConfig:
    """The absolute pose fixes the EKF of mode ``ekf`` corrects with."""

    measurement_rate: float = param(
        10.0,
        'Rate of the absolute pose fixes the EKF corrects with.',
        unit='Hz',
        min_value=MIN_RATE_HZ,
        max_value=1000.0,
    )
    measurement_noise_translation: float = param(
        0.0025,
        'Variance of each pose fix along x and along y.',
        unit='m^2',
        min_value=0.0,
        max_value=FIX_VARIANCE_MAX_M2,
        min_exclusive=True,
    )
    measurement_noise_rotation: float = param(
        0.0012,
        'Variance of the heading of each pose fix.',
        unit='rad^2',
        min_value=0.0,
        max_value=NOISE_VARIANCE_MAX,
        min_exclusive=True,
    )


@dataclass(frozen=True)
class LocalizationConfig(frames.FrameNames):
    """Everything the ``localization`` node is configured with."""

    mode: str = param(
        'noisy',
        'perfect: exact odometry and pose; noisy: drifting odometry and noisy map pose; '
        'ekf: an EKF fusing the drifting odometry with noisy pose fixes.',
        choices=MODES,
        read_only=True,
    )
    seed: int = param(
        0,
        'Seed of every random generator: equal seeds and inputs give equal outputs.',
        min_value=0,
        max_value=2**63 - 1,
        read_only=True,
    )
    odometry_source: str = param(
        'ground_truth',
        'ground_truth: odometry is the true motion plus drift noise; joint_states: odometry '
        'integrates the wheel encoders of joint_states (encoders.*), so slip, spin and '
        'calibration errors become odometry error (modes noisy and ekf).',
        choices=ODOMETRY_SOURCES, read_only=True,
    )
    publish_map_to_odom: bool = param(
        True,
        'Publish map -> odom on /tf; false when another localizer publishes it (Nav2\'s AMCL: '
        'nav2_bringup.launch.py localization:=amcl). odom, pose and odom -> base_link stay.',
        read_only=True,
    )
    map_frame: str = frames.map_frame()
    odom_frame: str = frames.odom_frame()
    base_frame: str = frames.base_frame()
    frame_prefix: str = frames.frame_prefix()
    localization: NoiseConfig = group(NoiseConfig)
    ekf: EkfConfig = group(EkfConfig)
    encoders: EncoderConfig = group(EncoderConfig)

    def __post_init__(self) -> None:
        self.check_frames()
        if self.odometry_source == 'joint_states' and self.mode == 'perfect':
            raise ParameterError(
                'odometry_source', self.odometry_source,
                "must be 'ground_truth' in mode perfect (perfect odometry is the true motion)",
            )
        if self.odometry_source == 'joint_states':
            self.encoders.check_geometry_not_given()
