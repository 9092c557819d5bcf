"""Node-level parameters of ``vehicle_sim`` (the vehicle's own are in ``vehicle_config``).

One declaration gives the ROS parameters, their validation and their documentation (see
:mod:`wheelsim.core.params`). Names and meanings of the reference simulator are kept
(``step_rate``, ``pub_rate``, ``twist_reference_max_oldness``, ``be_reference_clock``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from wheelsim.core import frames
from wheelsim.core.params import ParameterError, group, param
from wheelsim.core.units import MIN_RATE_HZ, NS_PER_S
from wheelsim.core.vehicle.config import MODELS
from wheelsim.core.world.config import ScanSettings, WorldSettings
from wheelsim.core.world.footprint import Footprint

CMD_VEL_TYPES = ('auto', 'twist', 'twist_stamped')


#: The farthest a vehicle is put from the map's origin, along x and along y [m]: the start pose's
#: range, and the range of an ``initialpose`` teleport (the other nodes refuse poses beyond
#: 1e9 m, which noise would soon carry a vehicle put there to).
MAX_PLACED_M = 1e6


@dataclass(frozen=True)
class InitialPose:
    """Where the vehicle starts, and where ``~/reset`` puts it back (map frame)."""

    x: float = param(
        0.0, 'Start position x in the map frame.', unit='m', min_value=-MAX_PLACED_M,
        max_value=MAX_PLACED_M
    )
    y: float = param(
        0.0, 'Start position y in the map frame.', unit='m', min_value=-MAX_PLACED_M,
        max_value=MAX_PLACED_M
    )
    yaw: float = param(
        0.0, 'Start heading in the map frame.', unit='rad', min_value=-2 * math.pi,
        max_value=2 * math.pi,
    )


@dataclass(frozen=True)
class CommandLimits:
    """Bounds beyond which a ``cmd_vel`` value is absurd and saturated (with a warning)."""

    linear: float = param(
        100.0, 'cmd_vel linear x and y beyond +-this are saturated to it.', unit='m/s',
        min_value=0.0, min_exclusive=True, max_value=1e6,
    )
    angular: float = param(
        100.0, 'cmd_vel angular z beyond +-this is saturated to it.', unit='rad/s',
        min_value=0.0, min_exclusive=True, max_value=1e6,
    )


#: The parameters only vehicle_sim's reference clock uses.
REFERENCE_CLOCK_PARAMETERS = ('real_time_factor', 'clock_rate')


#: What a vehicle_sim that is not the reference clock runs on, by its clock (the argument of
#: :func:`unused_parameters`).
FOLLOWED_CLOCKS = {
    'wall': 'runs on the wall clock',
    'sim': 'follows /clock (use_sim_time true)',
    'run': "follows the clock of a wheelsim run, which --real-time-factor paces",
}


def unused_parameters(model: str, clock: str) -> dict[str, str]:
    """{parameter name, or ``group.`` for each of a group's: why} of the parameters vehicle_sim
    does not use with the read-only ``model`` and ``clock``: ``'reference'`` (it owns the
    simulated time) or one of :data:`FOLLOWED_CLOCKS`."""
    unused = {}
    if clock != 'reference':
        for name in REFERENCE_CLOCK_PARAMETERS:
            unused[name] = ('only the reference clock uses it (be_reference_clock true, '
                            'use_sim_time false, chosen at start-up), and this vehicle_sim '
                            f'{FOLLOWED_CLOCKS[clock]}')
    for other in MODELS:
        if other != model:
            unused[f'model_params.{other}.'] = f'the vehicle is {model} (model is read only)'
    return unused


@dataclass(frozen=True)
class VehicleSimSettings(frames.FrameNames):
    """Timing, clock mode, command input and frame names of the ``vehicle_sim`` node."""

    step_rate: float = param(
        1000.0, 'Rate at which the vehicle is stepped, in simulated time.', unit='Hz',
        min_value=1.0, max_value=100_000.0, read_only=True,
    )
    pub_rate: float = param(
        50.0, 'Rate at which the outputs are published, in simulated time (<= step_rate).',
        unit='Hz', min_value=MIN_RATE_HZ, max_value=100_000.0,
    )
    twist_reference_max_oldness: float = param(
        1.0, 'A command older than this (by stamp for TwistStamped, by arrival for Twist) '
        'becomes zero and the vehicle brakes; 0: commands never expire.', unit='s',
        min_value=0.0, max_value=3600.0,
    )
    be_reference_clock: bool = param(
        False, 'Own the simulated time and publish it on /clock (not with use_sim_time).',
        read_only=True,
    )
    real_time_factor: float = param(
        1.0, 'Reference-clock mode: simulated seconds per wall second; 0: as fast as possible '
        f'(else at least {MIN_RATE_HZ:g}).', min_value=0.0, max_value=100_000.0,
    )
    clock_rate: float = param(
        100.0, 'Reference-clock mode: /clock messages per simulated second (<= step_rate); '
        'timers of other nodes fire on time when their period is a multiple of 1/clock_rate.',
        unit='Hz', min_value=MIN_RATE_HZ, max_value=100_000.0,
    )
    max_time_jump: float = param(
        1.0, 'Clock advances up to this beyond one publish period are simulated step by step; '
        'a larger forward jump is skipped (the vehicle state is carried over) with a warning.',
        unit='s',
        min_value=0.0, min_exclusive=True, max_value=86_400.0,
    )
    cmd_vel_type: str = param(
        'auto', 'Message type of cmd_vel: auto follows the type its publishers use.',
        choices=CMD_VEL_TYPES, read_only=True,
    )
    map_frame: str = frames.map_frame()
    base_frame: str = frames.base_frame()
    frame_prefix: str = frames.frame_prefix()
    robot_state_publisher: str = param(
        'robot_state_publisher', 'Node (relative names: in the namespace of vehicle_sim) whose '
        'robot_description parameter is set to the new URDF after a live change of the vehicle, '
        'so that RViz shows the simulated vehicle; empty: none.', read_only=True,
    )
    seed: int = param(
        0, 'Seed of every random draw vehicle_sim makes (each use has its own stream): equal '
        'seeds and inputs give equal outputs.', min_value=0, max_value=2**63 - 1,
        read_only=True,
    )
    initial_pose: InitialPose = group(InitialPose)
    cmd_vel_limits: CommandLimits = group(CommandLimits)
    world: WorldSettings = group(WorldSettings)
    scan: ScanSettings = group(ScanSettings)
    footprint: tuple[float, ...] = param(
        (), 'Collision footprint in the base frame, x, y pairs of its corners '
        '[x1, y1, x2, y2, ...] (as Nav2\'s footprint, flat); empty: the rectangle around the '
        'wheels.', unit='m', read_only=True,
    )
    footprint_frame: str = param(
        '', 'REP-120 frame joined to the base frame by a fixed identity joint in the URDF '
        '(e.g. base_footprint, which stock Nav2 parameters name); empty: none. frame_prefix '
        'is put before it.', read_only=True,
    )

    @property
    def max_gap_ns(self) -> int:
        """The largest advance of the clock that is stepped through [ns]: ``max_time_jump``
        beyond one publish period; a larger forward jump is skipped."""
        return round((self.max_time_jump + 1.0 / self.pub_rate) * NS_PER_S)

    def __post_init__(self) -> None:
        if 0.0 < self.real_time_factor < MIN_RATE_HZ:
            raise ParameterError('real_time_factor', self.real_time_factor,
                                 f'must be 0 (as fast as possible) or in [{MIN_RATE_HZ:g}, '
                                 '100000]')
        # clock_rate only with the reference clock: the other clock modes never use it, so
        # its default (100 Hz) must not refuse a lower step_rate there.
        checked = ('pub_rate', 'clock_rate', 'scan.rate') if self.be_reference_clock else (
            'pub_rate', 'scan.rate')
        for name in checked:
            value = self.scan.rate if name == 'scan.rate' else getattr(self, name)
            if value > self.step_rate:
                raise ParameterError(name, value, f'must be <= step_rate ({self.step_rate:g} Hz)')
        self.check_frames()
        taken = {self.map_frame: 'map_frame', self.base_frame: 'base_frame'}
        for name, value in (('scan.frame_id', self.scan.frame_id),
                            ('footprint_frame', self.footprint_frame)):
            if name == 'scan.frame_id' and not value:
                raise ParameterError(name, value, 'must not be empty')
            frames.check_frame_text(name, value)
            if value in taken:
                raise ParameterError(name, value, f'must differ from {taken[value]}')
            if value:
                taken[value] = name
        if self.footprint:
            Footprint.from_flat(self.footprint)
