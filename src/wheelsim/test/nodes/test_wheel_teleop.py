"""wheel_teleop: a gamepad's sticks drive vehicle_sim through wheel_commands.

In lock-step (wheelsim.run.lockstep, no DDS) with the real VehicleSim node class and a pad node
publishing sensor_msgs/Joy; over DDS the node runs as its own process with a probe.
"""

import math
import re
from dataclasses import replace

import pytest
from sensor_msgs.msg import Joy
from std_msgs.msg import Float64MultiArray, String

import wheelsim.sim as ws
from wheelsim.core.vehicle.description import DescriptionError, describe, wheel_radius_m
from wheelsim.core.vehicle.urdf import build_urdf
from wheelsim.nodes.vehicle_sim import VehicleSim
from wheelsim.nodes.wheel_teleop import WheelTeleop
from wheelsim.ros import qos
from wheelsim.run.lockstep import Lockstep
from wheelsim.testing.processes import NodeProcess

START_NS = 1_000_000_000
PERIOD_S = 0.05  # joy_node's autorepeat_rate of 20 Hz


def pad_class(frames):
    """A node publishing ``frames[k]`` = (axes, buttons) as Joy every PERIOD_S, then nothing."""

    class Pad:
        name = 'pad'

        def __init__(self, seam):
            self.publisher = seam.create_publisher(Joy, 'joy', 10)
            self.left = list(frames)
            seam.create_timer(PERIOD_S, self.tick)

        def tick(self):
            if self.left:
                axes, buttons = self.left.pop(0)
                self.publisher.publish(Joy(axes=axes, buttons=buttons))

    return Pad


def drive(preset, teleop_params, frames, seconds, vehicle_params=None):
    """Run vehicle_sim (``preset``, with ``vehicle_params`` over its parameters), wheel_teleop
    and the pad; (the last ground truth twist (vx, vy, wz), the wheel_commands sent, the
    teleop node, the vehicle)."""
    sent, truth = [], []

    def record(topic, msg, _time_ns):
        if topic == '/wheel_commands':
            sent.append(list(msg.data))
        elif topic == '/ground_truth':
            twist = msg.twist.twist
            truth.append((twist.linear.x, twist.linear.y, twist.angular.z))

    vehicle = ws.load_vehicle(preset)
    lockstep = Lockstep(record, START_NS)
    lockstep.add(VehicleSim, {**vehicle.parameters, **(vehicle_params or {}),
                              'use_sim_time': True, 'cmd_vel_type': 'twist'})
    teleop = lockstep.add(WheelTeleop, {'use_sim_time': True, **teleop_params})
    lockstep.add(pad_class(frames), {})
    lockstep.run_until(START_NS + round(seconds * 1e9))
    return truth[-1], sent, teleop, vehicle


def held(axes, seconds, buttons=()):
    return [(axes, list(buttons))] * round(seconds / PERIOD_S)


def test_arcade_full_throttle_is_the_top_speed_and_full_turn_spins_left():
    (vx, _, wz), sent, teleop, vehicle = drive('indoor_differential', {},
                                               held([0.0, 1.0], 4.0), 4.0)
    top_mps = vehicle.config.active.drive_actuators.max_velocity
    assert vx == pytest.approx(top_mps, rel=1e-6) and abs(wz) < 1e-9
    radius_m = vehicle.config.active.wheel_radius_m
    assert sent[-1] == pytest.approx([top_mps / radius_m] * 2)
    (vx, _, wz), sent, _, _ = drive('indoor_differential', {}, held([1.0, 0.0], 4.0), 4.0)
    assert abs(vx) < 1e-9 and wz > 0.5  # counterclockwise, on the spot
    assert sent[-1][0] == pytest.approx(-sent[-1][1])


def test_without_a_speed_limit_full_stick_is_the_controllers_stand_in_with_a_warning(capsys):
    """Found in review: with drive_actuators.max_velocity 0 (no limit) vehicle_description has
    no max_speed; reading it raised a TypeError and every command after was [0.0, 0.0]."""
    unlimited = {'model_params.differential.drive_actuators.max_velocity': 0.0}
    (vx, _, wz), sent, _, vehicle = drive('indoor_differential', {}, held([0.0, 0.5], 4.0), 4.0,
                                          unlimited)
    radius_m = vehicle.config.active.wheel_radius_m
    top_radps = 2.0 / radius_m  # 2 m/s, as the controller takes (docs/parameters.md)
    assert sent and sent[-1] == pytest.approx([0.5 * top_radps] * 2)
    assert vx == pytest.approx(1.0, rel=1e-3) and abs(wz) < 1e-9
    log = capsys.readouterr().err
    assert (f'differential vehicle without a speed limit: full stick is {top_radps:.3g} rad/s '
            'unless max_wheel_velocity is set (a top speed of 2 m/s, as the controller takes '
            'for such a vehicle)') in log, log
    assert 'callback failed' not in log, log


def test_tank_drives_each_side_with_its_stick_on_every_wheel_of_an_omni():
    axes = [0.0, -0.5, 0.0, 0.0, 0.5]  # left stick back, right stick forward: turn left
    (vx, vy, wz), sent, _, vehicle = drive('mecanum_omni', {'mapping': 'tank'},
                                           held(axes, 3.0), 3.0)
    full = sent[-1][1] * 2.0
    assert sent[-1] == pytest.approx([-full / 2, full / 2, -full / 2, full / 2])
    assert abs(vx) < 1e-9 and abs(vy) < 1e-9 and wz > 0.2
    assert full * vehicle.config.active.wheel_radius_m == pytest.approx(
        vehicle.config.active.drive_actuators.max_velocity)


def test_the_enable_button_sends_one_zero_when_released_and_nothing_while_up():
    frames = (held([0.0, 1.0], 1.0, [0, 1]) + held([0.0, 1.0], 1.0, [0, 0])
              + held([0.0, 1.0], 0.5, [1, 0]))
    (vx, _, _), sent, _, _ = drive('indoor_differential',
                                   {'enable_button': 1, 'max_wheel_velocity': 5.0}, frames, 2.6)
    assert sent == [[5.0, 5.0]] * 20 + [[0.0, 0.0]]
    assert abs(vx) < 1e-5  # stopping: the zero went through the actuators


def test_a_missing_axis_or_a_car_gives_no_command_and_a_warning(capsys):
    _, sent, _, _ = drive('indoor_differential', {'axis_throttle': 6}, held([0.0, 1.0], 0.5),
                          0.5)
    assert sent == []
    assert 'joy ignored: axis_throttle = 6 but the joystick has 2 axes' in capsys.readouterr().err
    _, sent, _, _ = drive('ackermann_car', {}, held([0.0, 1.0], 0.5), 0.5)
    assert sent == []
    log = capsys.readouterr().err
    assert ('a bicycle vehicle: wheel_teleop drives vehicles driven side by side '
            '(differential, omni); drive this one on cmd_vel') in log
    # found in review: each joy then said "no vehicle ... described yet", as if it might come
    assert 'joy ignored: a bicycle vehicle is not driven side by side; drive it on cmd_vel' \
        in log and 'yet' not in log, log


@pytest.mark.parametrize('bad_axes', [[0.0, math.nan], [math.inf, 0.5]])
def test_a_stick_that_is_not_finite_stops_the_wheels_with_a_warning(capsys, bad_axes):
    """Found in review: NaN passed np.clip, so wheel_commands carried NaN, which vehicle_sim
    rejects keeping the previous command: the vehicle drove on at full speed for 1 s; an
    infinite axis was taken as full stick."""
    frames = held([0.0, 1.0], 1.0) + held(bad_axes, 0.5)
    (vx, _, _), sent, _, _ = drive('indoor_differential', {}, frames, 1.5)
    assert sent[-1] == [0.0, 0.0] and all(math.isfinite(v) for c in sent for v in c)
    assert vx < 0.5  # braking from 0.8 m/s at 1 m/s^2, not driving on at full speed
    log = capsys.readouterr().err
    assert 'axis_throttle = 1, axis_turn = 0: axes [' in log
    assert 'not finite: stopping the wheels' in log


def test_each_reason_of_a_joy_warning_is_throttled_on_its_own(capsys):
    """Found in review: every joy warning went through one call site's throttle, so a missing
    axis hid the next reason's warning for 5 s."""
    frames = held([0.0], 0.2) + held([0.0, math.nan], 0.2)
    drive('indoor_differential', {}, frames, 0.5)
    log = capsys.readouterr().err
    assert 'joy ignored: axis_throttle = 1 but the joystick has 1 axes' in log
    assert 'not finite: stopping the wheels' in log


@pytest.mark.parametrize('limits, top_mps', [({}, 0.8), ({'max_speed': None}, 2.0),
                                             ({'max_speed': 0.0}, 2.0)],
                         ids=['its top speed', 'null', 'zero'])
def test_over_dds_it_turns_the_pad_into_wheel_commands(probe, limits, top_mps):
    """The node as its own process: a probe gives it the vehicle (its own top speed, 0.8 m/s, or
    none, null or 0 in the document: the 2 m/s stand-in, with the warning) and a stick, and
    hears the wheel joint velocities (rad/s) on wheel_commands; a max_speed of 0 is no limit,
    with the stand-in's warning as for null."""
    vehicle = ws.load_vehicle('indoor_differential')
    description = probe.publisher(String, 'vehicle_description', qos.LATCHED)
    commands = probe.record(Float64MultiArray, 'wheel_commands')
    pad = probe.publisher(Joy, 'joy')
    with NodeProcess('wheelsim.nodes.wheel_teleop', {'mapping': 'arcade'}) as node:
        described = replace(describe(vehicle.config, build_urdf(vehicle.config)), **limits)
        description.publish(String(data=described.to_json()))
        assert probe.spin_until(lambda: 'full stick is' in node.output(), 30.0), node.output()
        assert probe.spin_until(lambda: pad.publish(Joy(axes=[0.0, 0.5])) or commands, 60.0), (
            node.output())
        radius_m = vehicle.config.active.wheel_radius_m
        assert list(commands[-1].data) == pytest.approx([0.5 * top_mps / radius_m] * 2)
        assert ('without a speed limit' in node.output()) == bool(limits), node.output()
        assert 'callback failed' not in node.output(), node.output()
        assert node.stop_cleanly(), node.output()
    assert math.isfinite(commands[-1].data[0])


def test_the_wheel_radius_is_the_cylinder_of_the_first_wheel_or_an_error_saying_why():
    vehicle = ws.load_vehicle('mecanum_omni')
    urdf = build_urdf(vehicle.config)
    assert wheel_radius_m(urdf) == pytest.approx(vehicle.config.active.wheel_radius_m)
    radius = f'radius="{vehicle.config.active.wheel_radius_m:.9g}"'
    for text, why in [('', 'no urdf given'), ('<robot', 'urdf: not XML'),
                      ('<robot name="r"><link name="base_link"/></robot>',
                       'urdf: no wheel (no continuous joint)'),
                      (urdf.replace(radius, 'radius="0"'), 'urdf: wheel front_left_wheel: '),
                      (urdf.replace(radius, 'radius="-0.1"'), 'urdf: wheel front_left_wheel: '),
                      (urdf.replace('<cylinder', '<sphere'), 'no cylinder')]:
        with pytest.raises(DescriptionError, match=re.escape(why)):
            wheel_radius_m(text)


@pytest.mark.parametrize('max_wheel_velocity', [0.0, 3.0])
def test_over_dds_a_description_without_a_wheel_radius_needs_max_wheel_velocity(
        probe, max_wheel_velocity):
    """A vehicle_description without a URDF (the document's urdf is optional) gives no wheel
    radius: the vehicle is taken with a warning, and full stick is max_wheel_velocity; with it 0,
    each Joy message gives no command and a warning saying to set it (never zeros)."""
    vehicle = ws.load_vehicle('indoor_differential')
    description = probe.publisher(String, 'vehicle_description', qos.LATCHED)
    commands = probe.record(Float64MultiArray, 'wheel_commands')
    pad = probe.publisher(Joy, 'joy')
    with NodeProcess('wheelsim.nodes.wheel_teleop',
                     {'mapping': 'arcade', 'max_wheel_velocity': max_wheel_velocity}) as node:
        description.publish(String(data=describe(vehicle.config, '').to_json()))
        assert probe.spin_until(lambda: 'vehicle without a wheel radius' in node.output(),
                                30.0), node.output()
        refused = 'joy ignored: max_wheel_velocity = 0 and the vehicle_description gives no ' \
                  'top wheel speed (no urdf given): set max_wheel_velocity'
        assert probe.spin_until(
            lambda: pad.publish(Joy(axes=[0.0, 0.5])) or commands or refused in node.output(),
            60.0), node.output()
        if max_wheel_velocity:
            assert list(commands[-1].data) == pytest.approx([0.5 * max_wheel_velocity] * 2)
        else:
            assert [list(command.data) for command in commands] == [], node.output()
        assert 'callback failed' not in node.output(), node.output()
        assert node.stop_cleanly(), node.output()


def test_over_dds_a_refused_description_is_ignored_and_the_vehicle_before_stays(probe):
    """A vehicle_description with a negative max_speed (which would invert the sticks) is
    ignored with a warning naming the field; the vehicle described before still drives, at its
    own top speed."""
    vehicle = ws.load_vehicle('indoor_differential')
    description = probe.publisher(String, 'vehicle_description', qos.LATCHED)
    commands = probe.record(Float64MultiArray, 'wheel_commands')
    pad = probe.publisher(Joy, 'joy')
    with NodeProcess('wheelsim.nodes.wheel_teleop', {'mapping': 'arcade'}) as node:
        described = describe(vehicle.config, build_urdf(vehicle.config))
        description.publish(String(data=described.to_json()))
        assert probe.spin_until(lambda: 'full stick is' in node.output(), 30.0), node.output()
        description.publish(String(data=replace(described, max_speed=-0.8).to_json()))
        why = ('vehicle_description ignored: limits.max_speed = -0.8: expected a number >= 0 '
               '(0: no limit) or null')
        assert probe.spin_until(lambda: why in node.output(), 30.0), node.output()
        assert probe.spin_until(lambda: pad.publish(Joy(axes=[0.0, 0.5])) or commands, 60.0), (
            node.output())
        top_radps = described.max_speed / vehicle.config.active.wheel_radius_m
        assert list(commands[-1].data) == pytest.approx([0.5 * top_radps] * 2)
        assert 'callback failed' not in node.output(), node.output()
        assert node.stop_cleanly(), node.output()
