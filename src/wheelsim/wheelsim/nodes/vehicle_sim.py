"""vehicle_sim: the plant. Steps the vehicle core in simulated time and publishes its state.

Timing (see docs/vehicle_sim.md): the vehicle is stepped at ``step_rate`` on an exact grid of
simulated time (:class:`wheelsim.core.vehicle_sim.timeline.Timeline`); outputs are published every
``1/pub_rate`` of simulated time, stamped with the time of the state they carry; the steps in
between are computed in one batch. A command is applied at the step where it arrives: the
vehicle is first stepped up to that time, so the configured dead time is exact.

Clock modes: wall clock and ``use_sim_time`` both follow the node's ROS clock: the vehicle is
advanced up to "now" at every publish time, every command and (use_sim_time) every clock
change. With ``be_reference_clock`` the node owns time, paced against the monotonic wall clock
by ``real_time_factor``, and publishes ``/clock``. On the wall clock (modes 1 and 3) the
periodic work runs on :class:`WallTicker` threads, much cheaper than executor timers: stepping
and publishing on one, the housekeeping (diagnostics, the cmd_vel, wheel_commands and map
publisher checks) on another, so that the executor only wakes for incoming messages and
services. With ``use_sim_time`` (and on a headless run's lock-step seam) it all runs in timer
and time-change callbacks of the seam, and, live only, the housekeeping on steady-clock executor
timers. A lock serialises the tickers with the executor's callbacks. Live only: the ``~/reset``
service, the robot_state_publisher sync, the housekeeping (docs/architecture.md).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from functools import partial, wraps
from typing import Any, NoReturn

from geometry_msgs.msg import PoseWithCovarianceStamped
from rosgraph_msgs.msg import Clock
from std_srvs.srv import Trigger

from wheelsim.core.localization.ekf import checked_covariance
from wheelsim.core.params import ParameterError, ParamSpec, from_flat, specs
from wheelsim.core.units import NS_PER_S
from wheelsim.core.vehicle.config import VEHICLE_PARAM_SPECS, vehicle_config_from_params
from wheelsim.core.vehicle.description import VehicleDescription, describe
from wheelsim.core.vehicle.model import Vehicle
from wheelsim.core.vehicle_sim.command import CommandAge
from wheelsim.core.vehicle_sim.config import (
    MAX_PLACED_M,
    VehicleSimSettings,
    unused_parameters,
)
from wheelsim.core.vehicle_sim.description import check_frame_links, vehicle_sim_urdf
from wheelsim.core.vehicle_sim.timeline import Event, JumpKind, Pacer, Timeline
from wheelsim.core.world.map_file import load_map_parameter
from wheelsim.ros import qos
from wheelsim.ros.clock import (
    ClockMode,
    PeriodicCalls,
    WallTicker,
    clock_mode,
    ros_time_reader,
    steady_timer,
    timer_period_s,
)
from wheelsim.ros.cmd_vel import PUBLISHER_CHECK_PERIOD_S, CmdVelInput
from wheelsim.ros.conversions import clock_msg, planar_covariance
from wheelsim.ros.description_sync import RobotStatePublisherSync
from wheelsim.ros.inputs import MapPoses
from wheelsim.ros.node_main import run_node
from wheelsim.ros.other_publishers import OTHER_PUBLISHERS_CHECK_PERIOD_S, OtherPublishers
from wheelsim.ros.parameters import NodeParameters
from wheelsim.ros.seam import NodeSeam
from wheelsim.ros.sim_diagnostics import DIAGNOSTICS_PERIOD_S, SimDiagnostics
from wheelsim.ros.sim_world import SimWorld
from wheelsim.ros.vehicle_description import VehicleDescriptionPublisher
from wheelsim.ros.vehicle_outputs import VehicleOutputs
from wheelsim.ros.wheel_commands import WheelCommandInput

PACING_BUDGET_NS = 2_000_000  # wall time one pacing call may use before yielding to callbacks
UNLIMITED_CHUNK_NS = 3600 * NS_PER_S  # target of one pacing call at real_time_factor 0


def _locked(method):
    """Run a method under the node's lock: the wall ticker thread and the executor share state."""

    @wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return locked


class VehicleSim:
    """The vehicle_sim node, on ``seam`` (:mod:`wheelsim.ros.seam`)."""

    name = 'vehicle_sim'

    def __init__(self, seam: NodeSeam) -> None:
        self._tickers: list[WallTicker] = []  # close() may run on a half-built node
        self.seam = seam
        self.params = NodeParameters(seam)
        self._settings = self.params.declare_config(VehicleSimSettings, self._on_settings)
        self._vehicle_config = self.params.declare(
            VEHICLE_PARAM_SPECS, vehicle_config_from_params, self._on_vehicle_config
        )
        settings = self.settings
        self.mode = clock_mode(seam, settings.be_reference_clock)
        self.params.freeze('use_sim_time', 'the clock mode is chosen at start-up')
        clock = {ClockMode.REFERENCE: 'reference', ClockMode.WALL: 'wall',
                 ClockMode.FOLLOW: 'sim'}[self.mode]
        unused = unused_parameters(self._vehicle_config.config.model, clock)
        for key, reason in unused.items():
            self.params.freeze_unused(key, reason)
        if 'real_time_factor' in unused and self.params.given('real_time_factor'):
            # As sim.launch.py and wheelsim run refuse it: asked for a pace, never silently
            # run at another.
            raise ParameterError('real_time_factor', settings.real_time_factor,
                                 f'has no effect: {unused["real_time_factor"]}; leave '
                                 'it out, or make this vehicle_sim the reference clock')
        self.params.report_unknown()

        initial = self._initial_pose()
        # Building it loads the compiled kernel now, not at the first step (which it would
        # stall).
        self.vehicle = Vehicle(
            self._vehicle_config.config, 1.0 / settings.step_rate, initial, settings.seed
        )
        self.outputs = VehicleOutputs(
            seam, settings.full_map_frame, settings.full_base_frame,
            [settings.frame_prefix + name for name in self.vehicle.joint_names],
            serialized=self.mode is not ClockMode.FOLLOW,  # see VehicleOutputs
        )
        urdf = self._urdf()
        self.outputs.publish_description(urdf)
        self._vehicle_description = VehicleDescriptionPublisher(seam)
        self._vehicle_description.publish(self._describe(urdf))
        self._description_sync = RobotStatePublisherSync(seam, settings.robot_state_publisher)
        body_frames = [settings.full_base_frame]
        if settings.footprint_frame:
            body_frames.append(settings.frame_prefix + settings.footprint_frame)
        self.cmd_vel = CmdVelInput(seam, settings.cmd_vel_type, self._on_command,
                                   self._command_limits(), body_frames=tuple(body_frames))
        self.wheel_commands = WheelCommandInput(
            seam, self.cmd_vel, lambda: self._vehicle_config.config, settings.frame_prefix
        )
        self._map_poses = MapPoses(seam, settings.full_map_frame)
        self._lock = threading.RLock()
        self.world = SimWorld(seam, settings, self._vehicle_config.config, self._map_poses,
                              self._lock)
        seam.create_subscription(
            PoseWithCovarianceStamped, 'initialpose', self._on_initial_pose, qos.DEFAULT
        )
        if seam.live:  # a test harness's reset of a running simulation
            seam.rclpy_node.create_service(Trigger, '~/reset', self._on_reset)
        self.diagnostics = SimDiagnostics(self, seam)

        self._max_gap_ns = settings.max_gap_ns  # read at every clock change
        self._ros_now_ns = ros_time_reader(seam, self.mode)
        self.timeline: Timeline | None = None
        self.command_age = CommandAge(settings.twist_reference_max_oldness)
        self._event_timers = {}
        # Two simulations of one robot (a launch started twice): their outputs would mix.
        self._other_simulations = OtherPublishers(
            seam, self.outputs.ground_truth_topic,
            ': another simulation of this robot? Their ground truth, joint_states and /tf mix '
            '(the robot seems to jump between them); stop one, or give each its own namespace '
            'and frame_prefix')
        housekeeping = [
            (DIAGNOSTICS_PERIOD_S, self.diagnostics.publish),
            (PUBLISHER_CHECK_PERIOD_S, self.cmd_vel.check_publishers),
            (PUBLISHER_CHECK_PERIOD_S, self.wheel_commands.check_publishers),
            (OTHER_PUBLISHERS_CHECK_PERIOD_S, self._other_simulations.check),
        ]
        if self.world.publishes_map:
            housekeeping.append((OTHER_PUBLISHERS_CHECK_PERIOD_S,
                                 self.world.check_map_publishers))
        if self.mode is ClockMode.FOLLOW:
            self._jump_handle = seam.on_time_change(self._follow_clock)
            self._follow_clock()
            if seam.live:  # on the wall clock: a headless run has no housekeeping
                for period_s, job in housekeeping:
                    steady_timer(seam.rclpy_node, period_s, job)
        else:
            if self.mode is ClockMode.REFERENCE:
                self._clock_publisher = seam.create_publisher(Clock, '/clock', qos.CLOCK_PUBLISHER)
                self._clock_message = Clock()  # reused: this mode never runs in-process
                self.pacer = Pacer(settings.real_time_factor)
                self._start(0)
                self._clock_publisher.publish(clock_msg(0))
                tick, name = self._pace, 'pacing'
            else:
                self._follow_clock()
                tick, name = self._wall_tick, 'stepping'
            housekeeping_error = partial(self._on_error, 'housekeeping')
            self._housekeeping = PeriodicCalls(housekeeping, housekeeping_error)
            self._tickers = [  # the stepping ticker first (_apply_rates wakes it)
                WallTicker(tick, partial(self._on_error, name), name),
                WallTicker(self._housekeeping_tick, housekeeping_error, 'housekeeping'),
            ]
        for ticker in self._tickers:
            ticker.start()
        self.seam.logger.info(
            f'{self._vehicle_config.config.model} vehicle, {self.mode.value}, stepping at '
            f'{settings.step_rate:g} Hz, publishing at {settings.pub_rate:g} Hz'
        )

    @property
    def settings(self) -> VehicleSimSettings:
        return self._settings.config

    def _initial_pose(self) -> tuple[float, float, float]:
        pose = self.settings.initial_pose
        return (pose.x, pose.y, pose.yaw)

    def _command_limits(self) -> tuple[float, float]:
        return (self.settings.cmd_vel_limits.linear, self.settings.cmd_vel_limits.angular)

    def _describe(self, urdf: str) -> VehicleDescription:
        """The vehicle as vehicle_description tells planner and controller."""
        return describe(self._vehicle_config.config, urdf, self.settings.full_base_frame)

    def _urdf(self) -> str:
        return vehicle_sim_urdf(self._vehicle_config.config, self.settings)

    # --- time -------------------------------------------------------------------------------

    def _start(self, origin_ns: int) -> None:
        """Put the current vehicle state at simulated time ``origin_ns``, publish it, start;
        the first time, publish the map too (world.map_yaml's, stamped ``origin_ns``)."""
        first = self.timeline is None
        self.timeline = Timeline(self.settings.step_rate, origin_ns)
        self._apply_rates()
        self.diagnostics.restart(origin_ns)
        self.outputs.publish_state(origin_ns, self.vehicle.state())
        if first:
            self.world.publish_map(origin_ns)

    def _apply_rates(self, publish: bool = True, clock: bool = True, scan: bool = True) -> None:
        """(Re)start the publish, clock and/or scan events from now, and what drives them."""
        settings = self.settings
        rates = {Event.PUBLISH: settings.pub_rate, Event.SCAN: settings.scan.rate}
        restart = [event for event, wanted in ((Event.PUBLISH, publish), (Event.SCAN, scan))
                   if wanted]
        for event in restart:
            self.timeline.set_rate(event, rates[event])
        if self.mode is ClockMode.REFERENCE:
            if clock:
                self.timeline.set_rate(Event.CLOCK, settings.clock_rate)
            self.pacer.restart(self.timeline.now_ns, time.monotonic_ns(), settings.real_time_factor)
        if self.mode is ClockMode.FOLLOW:
            # On the node's clock: fire at (not before) every publish and scan time, so that a
            # lock-step executor, which advances time from timer to timer, stops there too.
            for event in restart:
                if event in self._event_timers:
                    self.seam.destroy_timer(self._event_timers[event])
                self._event_timers[event] = self.seam.create_timer(
                    timer_period_s(rates[event]), self._mark_publish_time)
        elif self._tickers:
            self._tickers[0].wake()  # stepping and publishing

    def _mark_publish_time(self) -> None:
        """Publish and scan timers (use_sim_time): nothing left to do when they fire. The
        clock-change callback has stepped and published up to the new time already; the
        timers make a lock-step executor, which advances time from timer to timer, stop at
        every publish and scan time."""

    def _wall_tick(self) -> float:
        """Wall clock: advance to now; return the wall delay [s] to the next publish time."""
        with self._lock:
            self._follow_clock()
            next_ns = min(self.timeline.next_time_ns(Event.PUBLISH),
                          self.timeline.next_time_ns(Event.SCAN))
        return (next_ns - self._ros_now_ns()) / NS_PER_S

    @_locked
    def _housekeeping_tick(self) -> float:
        """Wall and reference clock: diagnostics and the cmd_vel publisher check, when due."""
        return self._housekeeping.tick()

    def _on_error(self, what: str, err: Exception) -> None:
        """An error in the work of a wall ticker ``what``: reported; the ticker goes on."""
        if not self.seam.rclpy_node.context.ok():  # shutting down (Ctrl-C): stop quietly
            for ticker in self._tickers:
                ticker.stop(timeout_s=0.0)  # destroy_node joins them; here one may be the other
            return
        self.seam.logger.error(f'{what} failed: {err!r}', throttle_duration_sec=5.0)

    def _now_ns(self) -> int | None:
        """Advance to "now" and return it; ``None`` while no simulated time exists yet."""
        if self.mode is not ClockMode.REFERENCE:
            self._follow_clock()
        return None if self.timeline is None else self.timeline.now_ns

    def _follow_clock(self) -> None:
        """Wall clock and use_sim_time: step up to the node's current ROS time.

        Called with the lock held (the stepping ticker, the locked callbacks through
        :meth:`_now_ns`), or before any ticker runs, or with use_sim_time from the clock's jump
        callback: that mode has no ticker thread, and rclpy runs the jump callback inside the
        ``/clock`` subscription's callback, which the node's (mutually exclusive) callback group
        keeps apart from its other callbacks, as a lock-step executor does (one thread).
        """
        target_ns = self._ros_now_ns()
        if self.timeline is None:
            if target_ns > 0:  # with use_sim_time, 0 until the first /clock
                self._start(target_ns)
            return
        kind = self.timeline.classify(target_ns, self._max_gap_ns)
        if kind is JumpKind.NORMAL:
            self._run(target_ns)
            return
        gap_s = (target_ns - self.timeline.now_ns) / NS_PER_S
        if kind is JumpKind.BACKWARD:
            self._map_poses.warnings.warn('time back', (
                f'time jumped back by {-gap_s:.6g} s: actuator histories and the command are '
                'reset, the simulation goes on from the new time'))
            self.vehicle.clear_histories()
            self.command_age.clear()
            self.vehicle.set_command(0.0, 0.0, 0.0)
        else:
            self._map_poses.warnings.warn('time forward', (
                f'time jumped forward by {gap_s:.6g} s (more than max_time_jump '
                f'{self.settings.max_time_jump:g} s): the gap is skipped, the vehicle state is '
                'carried over'))
        self.diagnostics.count_jump(kind)
        self._start(target_ns)
        self._arm_deadline()

    @_locked
    def _pace(self) -> float:
        """Reference clock: advance as far as ``real_time_factor`` allows, publishing /clock;
        return the wall delay [s] until the next /clock is due."""
        wall_ns = time.monotonic_ns()
        target_ns = self.pacer.target_ns(self.timeline.now_ns, wall_ns)
        if target_ns is None:
            target_ns = self.timeline.now_ns + UNLIMITED_CHUNK_NS
        self._run(target_ns, wall_deadline_ns=wall_ns + PACING_BUDGET_NS)
        due_ns = self.pacer.wall_time_ns(self.timeline.next_time_ns(Event.CLOCK))
        return 0.0 if due_ns is None else (due_ns - time.monotonic_ns()) / NS_PER_S

    def _run(self, target_ns: int, wall_deadline_ns: int | None = None) -> None:
        """Step to ``target_ns`` in batches, handling the events on the way."""
        for n_steps, event in self.timeline.run(target_ns):
            if n_steps:
                self.world.step(self.vehicle, n_steps, self.timeline)
                self.diagnostics.steps += n_steps
            now = self.timeline.now_ns
            if event is Event.PUBLISH:
                self.outputs.publish_state(now, self.vehicle.state())
            elif event is Event.SCAN:
                self.world.publish(now, self.vehicle.pose)
            elif event is Event.CLOCK:
                self._clock_publisher.publish(clock_msg(now, self._clock_message))
                if wall_deadline_ns is not None and time.monotonic_ns() > wall_deadline_ns:
                    break
            elif event is Event.EXPIRE:
                self.vehicle.set_command(0.0, 0.0, 0.0)
                self.diagnostics.stale_commands += 1
                self.seam.logger.info(
                    'the held command is older than twist_reference_max_oldness '
                    f'({self.settings.twist_reference_max_oldness:g} s): braking',
                    throttle_duration_sec=5.0,
                )

    def _arm_deadline(self) -> None:
        """Schedule the held command's expiry (``twist_reference_max_oldness``)."""
        self.timeline.set_deadline(self.command_age.deadline_ns())

    # --- inputs -----------------------------------------------------------------------------

    def _input_time_ns(self, what: str) -> int | None:
        """:meth:`_now_ns` for an input; ``None``, with a warning (throttled per input), before
        the first simulated time (use_sim_time and no /clock yet): the input is dropped."""
        now = self._now_ns()
        if now is None:
            self._map_poses.warnings.warn(
                f'{what} before the clock',
                f'{what} ignored: no simulated time yet (waiting for /clock)')
        return now

    @_locked
    def _on_command(self, topic_name: str, vx_mps: float, vy_mps: float, wz_radps: float,
                    stamp: int | None):
        now = self._input_time_ns(f'{topic_name}: command')
        if now is None:
            return
        if not self.command_age.receive(now, stamp):
            self.diagnostics.stale_commands += 1
            self.seam.logger.warning(
                f'command stamped {self.command_age.age_s(now):.3g} s ago is older than '
                f'twist_reference_max_oldness ({self.command_age.max_oldness_s:g} s): taken as '
                'zero',
                throttle_duration_sec=5.0,
            )
            vx_mps = vy_mps = wz_radps = 0.0
            self.command_age.clear()  # a stop held: nothing to expire, counted once
        elif stamp is not None and (stamp - now) / NS_PER_S > \
                self.command_age.max_oldness_s > 0.0:  # more than the freshness it may have
            self._map_poses.warnings.warn(f'{topic_name}: stamp ahead', (
                f'{topic_name}: command stamped {(stamp - now) / NS_PER_S:.3g} s ahead of this '
                'node\'s clock: counted from its arrival (is its publisher on another clock? '
                'use_sim_time)'))
        self.vehicle.set_command(vx_mps, vy_mps, wz_radps)
        self._arm_deadline()

    @_locked
    def _on_initial_pose(self, msg: PoseWithCovarianceStamped) -> None:
        pose = self._map_poses.pose(msg.pose.pose, msg.header.frame_id, 'initialpose')
        if pose is None or self._input_time_ns('initialpose') is None:
            return
        if max(abs(pose[0]), abs(pose[1])) > MAX_PLACED_M:
            self._map_poses.warnings.warn('initialpose far', (
                f'initialpose ignored: x={pose[0]:g} m, y={pose[1]:g} m (map frame) is beyond '
                f'+-{MAX_PLACED_M:g} m, the range of initial_pose.x and .y'))
            return
        try:  # as localization checks it: the two take the same messages
            checked_covariance('initial pose covariance', planar_covariance(msg.pose.covariance))
        except ValueError as err:
            self._map_poses.warnings.warn('initialpose invalid', f'initialpose ignored: {err}')
            return
        try:
            self.vehicle.teleport(pose)
        except ValueError as err:  # non-finite or absurd
            self._map_poses.warnings.warn('initialpose invalid', f'initialpose ignored: {err}')
            return
        self._map_poses.warnings.info('teleport', (
            f'teleported to x={pose[0]:.3f} m, y={pose[1]:.3f} m, yaw={pose[2]:.3f} rad'))

    @_locked
    def _on_reset(self, _request: Trigger.Request, response: Trigger.Response):
        self._now_ns()
        self.vehicle.reset()
        self.vehicle.teleport(self._initial_pose())
        self.command_age.clear()
        if self.timeline is not None:
            self._arm_deadline()
        response.success = True
        response.message = 'back at the initial pose (x, y, yaw) = ({:g}, {:g}, {:g})'.format(
            *self._initial_pose()
        )
        return response

    # --- live parameter changes -------------------------------------------------------------

    @_locked
    def _on_settings(self, new: VehicleSimSettings, old: VehicleSimSettings) -> None:
        self.cmd_vel.limits = self._command_limits()
        self.command_age.max_oldness_s = new.twist_reference_max_oldness
        self._max_gap_ns = new.max_gap_ns
        self.world.update(new)
        if self._now_ns() is None:
            return
        self._arm_deadline()
        if (new.pub_rate, new.clock_rate, new.real_time_factor, new.scan.rate) != (
            old.pub_rate, old.clock_rate, old.real_time_factor, old.scan.rate
        ):
            self._apply_rates(new.pub_rate != old.pub_rate, new.clock_rate != old.clock_rate,
                              new.scan.rate != old.scan.rate)

    @_locked
    def _on_vehicle_config(self, new, _old) -> None:
        self._now_ns()
        self.vehicle.apply_config(new)
        urdf = self._urdf()
        self.outputs.publish_description(urdf)
        self._vehicle_description.publish(self._describe(urdf))
        self._description_sync.update(urdf)

    def close(self) -> None:
        """Stop the wall tickers (before the seam is destroyed)."""
        for ticker in self._tickers:
            ticker.stop()


def parameter_specs() -> list[ParamSpec]:
    """Every parameter vehicle_sim declares: the node's own, then the vehicle's."""
    return specs(VehicleSimSettings) + VEHICLE_PARAM_SPECS


def check_parameters(values: Mapping[str, Any]) -> None:
    """Raise ParameterError unless ``values`` (dotted names) make a valid configuration, with
    a readable map if ``world.map_yaml`` names one."""
    settings = from_flat(VehicleSimSettings, values)
    check_frame_links(vehicle_config_from_params(values), settings)
    if settings.world.map_yaml:
        load_map_parameter(settings.world.map_yaml)


def main(args=None) -> NoReturn:
    run_node(VehicleSim, args)



if __name__ == '__main__':  # python -m wheelsim.nodes.vehicle_sim
    main()
