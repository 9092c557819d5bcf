"""Bags of a differential robot made without wheelsim's vehicle core or recorder: a reference
for ``wheelsim calibrate`` on recordings it did not make.

The robot follows docs/core.md's drive chain in continuous time, solved exactly: the body
command ``(vx [m/s], wz [rad/s])`` becomes rim speeds ``vx -+ track / 2 * wz`` (the forward
speed giving way when a wheel would exceed the top speed), each delayed by the dead time
(a real number of seconds, not whole steps), clamped to +-top speed and followed by a
first-order lag whose acceleration is clamped to +-max acceleration:
``dv/dt = clamp((u - v) / time_constant, -a, a)``. After a change of ``u`` the speed ramps at
``a`` until ``|u - v| = a * time_constant``, then approaches ``u`` exponentially.

A controller publishes geometry_msgs/TwistStamped on ``cmd_vel`` at its own rate, each message
carrying the schedule's command at its stamp, so the command changes only when a message is
sent and holds in between. nav_msgs/Odometry on ``odom`` (twist in base_link, the true twist
at the stamp plus Gaussian noise; pose integrated from it) and optionally sensor_msgs/JointState
on ``joint_states`` (wheelsim's wheel joint names, rim speed / radius), each at its own rate
and phase. Written with rosbags' public Writer (MCAP).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from wheelsim.core.arrays import FloatArray

TYPES = get_typestore(Stores.ROS2_JAZZY)
START_NS = 1_750_000_000_123_456_789  # a robot's wall clock
Step = tuple[float, tuple[float, float]]  # (hold [s], (vx [m/s], wz [rad/s]))


@dataclass(frozen=True)
class DriveTruth:
    """The robot: drive actuators shared by both wheels (SI units) and its track [m]."""

    dead_time_s: float
    time_constant_s: float
    max_velocity_mps: float
    max_acceleration_mps2: float
    track_m: float = 0.5
    wheel_radius_m: float = 0.1


@dataclass(frozen=True)
class Recorder:
    """Message rates [Hz], the noise on the odometry's twist (standard deviations in m/s and
    rad/s), the odometry's and joint_states' first stamp after the first command [s], and the
    controller's timer jitter: each command is sent up to ``command_jitter_s`` after its tick
    (uniformly), stamped when sent."""

    command_rate_hz: float = 50.0
    command_jitter_s: float = 0.0
    odometry_rate_hz: float = 50.0
    joint_rate_hz: float = 0.0  # 0: no joint_states
    vx_noise_mps: float = 0.005
    wz_noise_radps: float = 0.01
    odometry_phase_s: float = 0.007
    joint_phase_s: float = 0.003
    seed: int = 1


def schedule(top_speed_mps: float, rounds: int = 1) -> list[Step]:
    """docs/fidelity.md's "What to record" for a differential robot: from rest, held small and
    large speed steps, one beyond the top speed, reversals and turning; ``rounds`` times (each
    round about 40 s, the later ones with other step sizes)."""
    steps: list[Step] = [(1.5, (0.0, 0.0))]
    for r in range(rounds):
        v = top_speed_mps * (1.0 - 0.1 * r)
        steps += [(3.0, (0.3 * v, 0.0)), (2.5, (0.0, 0.0)), (3.0, (v, 0.0)), (3.0, (0.0, 0.0)),
                  (3.0, (1.4 * top_speed_mps, 0.0)), (2.5, (0.2 * v, 0.0)),
                  (3.0, (-0.7 * v, 0.0)), (2.0, (0.0, 0.0)), (2.5, (0.9 * v, 0.0)),
                  (2.5, (-0.4 * v, 0.0)), (2.5, (0.0, 0.0)), (3.0, (0.3 * v, 0.6)),
                  (3.0, (0.0, -1.0)), (2.5, (0.5 * v, -0.4)), (2.5, (0.0, 0.0))]
    return steps


def _wheel_references(vx: FloatArray, wz: FloatArray, truth: DriveTruth) -> FloatArray:
    """(N, 2) left and right rim speeds for body commands (docs/core.md, Differential)."""
    v_max = truth.max_velocity_mps
    turn = 0.5 * truth.track_m * wz
    spin = np.abs(turn) > v_max
    forward = np.clip(vx, np.abs(turn) - v_max, v_max - np.abs(turn))
    turn = np.where(spin, np.sign(turn) * v_max, turn)
    forward = np.where(spin, 0.0, forward)
    return np.stack([forward - turn, forward + turn], axis=1)


def _lag(v0: float, u: float, t: FloatArray, tau: float, a: float) -> FloatArray:
    """Speed ``t`` seconds after the target became ``u`` at speed ``v0``: ramp at ``a`` while
    ``|u - v| > a * tau``, then exponential."""
    gap = u - v0
    ramp_s = max(abs(gap) - a * tau, 0.0) / a
    sign = math.copysign(1.0, gap)
    ramp = v0 + sign * a * np.minimum(t, ramp_s)
    if tau == 0.0:
        return ramp
    gap_left = gap - sign * a * ramp_s
    return np.where(t <= ramp_s, ramp, u - gap_left * np.exp(-(t - ramp_s) / tau))


def wheel_speeds(truth: DriveTruth, command_t_s: FloatArray, command: FloatArray,
                 t_s: FloatArray) -> FloatArray:
    """(len(t_s), 2) rim speeds [m/s] at ``t_s``: the exact solution of the chain for the
    commands ``command`` (N, 2: vx, wz) held from ``command_t_s``, at rest before."""
    references = _wheel_references(command[:, 0], command[:, 1], truth)  # within +-top speed
    starts = np.concatenate([[-math.inf], command_t_s + truth.dead_time_s])
    targets = np.vstack([[0.0, 0.0], references])
    segment = np.searchsorted(starts, t_s, side='right') - 1
    out = np.zeros((len(t_s), 2))
    speed = np.zeros(2)
    for k in range(1, len(starts)):
        for wheel in range(2):
            u = targets[k, wheel]
            inside = segment == k
            if inside.any():
                out[inside, wheel] = _lag(speed[wheel], u, t_s[inside] - starts[k],
                                          truth.time_constant_s, truth.max_acceleration_mps2)
            if k + 1 < len(starts):
                span = np.array([starts[k + 1] - starts[k]])
                speed[wheel] = _lag(speed[wheel], u, span, truth.time_constant_s,
                                    truth.max_acceleration_mps2)[0]
    return out


def body_twist(truth: DriveTruth, rims: FloatArray) -> FloatArray:
    """(N, 2) forward speed [m/s] and turn rate [rad/s] from rim speeds (no slip)."""
    return np.stack([rims.mean(axis=1), (rims[:, 1] - rims[:, 0]) / truth.track_m], axis=1)


def _stamp(t_s: float):
    ns = START_NS + round(t_s * 1e9)
    return TYPES.types['builtin_interfaces/msg/Time'](sec=ns // 10**9, nanosec=ns % 10**9)


def _header(t_s: float, frame: str):
    return TYPES.types['std_msgs/msg/Header'](stamp=_stamp(t_s), frame_id=frame)


def _vector(x: float, y: float, z: float):
    return TYPES.types['geometry_msgs/msg/Vector3'](x=x, y=y, z=z)


def _twist(vx: float, wz: float):
    return TYPES.types['geometry_msgs/msg/Twist'](linear=_vector(vx, 0.0, 0.0),
                                                  angular=_vector(0.0, 0.0, wz))


def _odometry(t_s: float, pose: Sequence[float], twist: Sequence[float]):
    types = TYPES.types
    x, y, yaw = pose
    orientation = types['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=math.sin(yaw / 2),
                                                       w=math.cos(yaw / 2))
    return types['nav_msgs/msg/Odometry'](
        header=_header(t_s, 'odom'), child_frame_id='base_link',
        pose=types['geometry_msgs/msg/PoseWithCovariance'](
            pose=types['geometry_msgs/msg/Pose'](
                position=types['geometry_msgs/msg/Point'](x=x, y=y, z=0.0),
                orientation=orientation), covariance=np.zeros(36)),
        twist=types['geometry_msgs/msg/TwistWithCovariance'](
            twist=_twist(*twist), covariance=np.zeros(36)))


def _times(rate_hz: float, phase_s: float, end_s: float) -> FloatArray:
    return phase_s + np.arange(0.0, end_s - phase_s, 1.0 / rate_hz)


def write_bag(path: Path, truth: DriveTruth, steps: Sequence[Step],
              recorder: Recorder = Recorder()) -> None:
    """Drive the robot through ``steps`` and write the new bag folder ``path`` (see the module
    documentation). Times run from the first command (t = 0) to the end of the schedule."""
    end_s = sum(hold for hold, _ in steps)
    ends = np.cumsum([hold for hold, _ in steps])
    values = np.array([command for _, command in steps])
    rng = np.random.default_rng(recorder.seed)
    command_t = _times(recorder.command_rate_hz, 0.0, end_s)
    command_t += rng.uniform(0.0, recorder.command_jitter_s, len(command_t))
    command = values[np.minimum(np.searchsorted(ends, command_t, side='right'), len(steps) - 1)]
    odom_t = _times(recorder.odometry_rate_hz, recorder.odometry_phase_s, end_s)
    twist = body_twist(truth, wheel_speeds(truth, command_t, command, odom_t))
    measured = twist + rng.normal(0.0, 1.0, twist.shape) * [recorder.vx_noise_mps,
                                                             recorder.wz_noise_radps]
    yaw = np.concatenate([[0.0], np.cumsum(0.5 * (twist[1:, 1] + twist[:-1, 1])
                                           * np.diff(odom_t))])
    heading = np.exp(1j * yaw) * twist[:, 0]
    xy = np.concatenate([[0.0], np.cumsum(0.5 * (heading[1:] + heading[:-1])
                                          * np.diff(odom_t))])
    with Writer(path, version=8, storage_plugin=StoragePlugin.MCAP) as writer:
        cmd = writer.add_connection('/cmd_vel', 'geometry_msgs/msg/TwistStamped', typestore=TYPES)
        odom = writer.add_connection('/odom', 'nav_msgs/msg/Odometry', typestore=TYPES)
        for t, (vx, wz) in zip(command_t, command, strict=True):
            message = TYPES.types['geometry_msgs/msg/TwistStamped'](
                header=_header(t, 'base_link'), twist=_twist(vx, wz))
            writer.write(cmd, START_NS + round(t * 1e9), TYPES.serialize_cdr(
                message, 'geometry_msgs/msg/TwistStamped'))
        for i, t in enumerate(odom_t):
            message = _odometry(t, (xy[i].real, xy[i].imag, yaw[i]), measured[i])
            writer.write(odom, START_NS + round(t * 1e9) + 2_000_000,  # logged 2 ms late
                         TYPES.serialize_cdr(message, 'nav_msgs/msg/Odometry'))
        if recorder.joint_rate_hz > 0.0:
            _write_joints(writer, truth, recorder, command_t, command, end_s)


def _write_joints(writer: Writer, truth: DriveTruth, recorder: Recorder, command_t: FloatArray,
                  command: FloatArray, end_s: float) -> None:
    """joint_states: the wheels' rates [rad/s] and angles (trapezoid-integrated) [rad]."""
    joints = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState',
                                   typestore=TYPES)
    t_s = _times(recorder.joint_rate_hz, recorder.joint_phase_s, end_s)
    rates = wheel_speeds(truth, command_t, command, t_s) / truth.wheel_radius_m
    angles = np.vstack([[0.0, 0.0], np.cumsum(0.5 * (rates[1:] + rates[:-1])
                                              * np.diff(t_s)[:, np.newaxis], axis=0)])
    for t, rate, angle in zip(t_s, rates, angles, strict=True):
        message = TYPES.types['sensor_msgs/msg/JointState'](
            header=_header(t, ''), name=['left_wheel_joint', 'right_wheel_joint'],
            position=angle, velocity=rate, effort=np.zeros(0))
        writer.write(joints, START_NS + round(t * 1e9), TYPES.serialize_cdr(
            message, 'sensor_msgs/msg/JointState'))
