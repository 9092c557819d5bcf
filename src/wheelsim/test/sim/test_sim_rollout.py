"""wheelsim.sim: batches equal single runs, wheel-level commands equal their twists, walls stop
the footprint, bad input names the argument."""

import math
import warnings

import numpy as np
import pytest

import wheelsim.sim as ws
from wheelsim.core.world.collision import contact
from wheelsim.testing.maps import walled_room, write_map

DT_S = 0.01


def wavy_commands(count: int, phase: float) -> np.ndarray:
    t = np.arange(count) * DT_S + phase
    return np.column_stack([0.5 + 0.3 * np.sin(t), 0.2 * np.cos(2 * t), 0.8 * np.sin(0.7 * t)])


def policy(state, t_s):
    """Steer towards the x axis at a speed that grows with time (any state shape)."""
    state = np.asarray(state)
    vx = np.full(state.shape[:-1], 0.3 + 0.05 * t_s)
    return np.stack([vx, np.zeros_like(vx), -1.5 * state[..., 1] - 0.8 * state[..., 2]], axis=-1)


def assert_same(batch: ws.Trajectory, single: ws.Trajectory) -> None:
    for name in ('t_s', 'x_m', 'y_m', 'yaw_rad', 'vx_mps', 'vy_mps', 'wz_radps',
                 'wheel_speed_radps', 'steering_rad', 'command', 'command_twist'):
        np.testing.assert_array_equal(getattr(batch, name), getattr(single, name), err_msg=name)
    assert batch.collisions == single.collisions


@pytest.fixture
def noisy_omni():
    return ws.load_vehicle('mecanum_omni', {
        'model_params.omni.drive_actuators.noise_stddev': 0.05})


def test_batched_simulate_equals_single_runs(noisy_omni):
    x0 = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.5], [-3.0, 1.0, -2.0], [0.5, 0.5, 3.0]])
    commands = np.stack([wavy_commands(300, phase) for phase in range(4)])
    seeds = [0, 1, 2, 2**40]
    batch = ws.simulate(noisy_omni, x0, commands, DT_S, seeds=seeds)
    assert batch.x_m.shape == (4, 301) and batch.wheel_speed_radps.shape == (4, 301, 4)
    for i in range(4):
        assert_same(batch.vehicle(i), ws.simulate(noisy_omni, x0[i], commands[i], DT_S,
                                                  seeds=seeds[i]))
    # the seeds matter: the same commands with another seed give another trajectory
    other = ws.simulate(noisy_omni, x0[0], commands[0], DT_S, seeds=5)
    assert not np.array_equal(other.x_m, batch.x_m[0])


def test_one_command_sequence_with_n_start_poses_drives_a_batch_of_n(noisy_omni):
    # python_api.md: x0 (N, 3) makes a batch; (K, C) commands are then every vehicle's
    x0 = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.5], [-3.0, 1.0, -2.0]])
    commands = wavy_commands(200, 0.0)
    batch = ws.simulate(noisy_omni, x0, commands, DT_S, seeds=[0, 1, 2])
    assert batch.x_m.shape == (3, 201) and batch.command.shape == (3, 200, 3)
    for i in range(3):
        assert_same(batch.vehicle(i), ws.simulate(noisy_omni, x0[i], commands, DT_S, seeds=i))
    with pytest.raises(ValueError, match='seeds must be 3 integers, one per vehicle'):
        ws.simulate(noisy_omni, x0, commands, DT_S, seeds=0)


def test_an_x0_of_one_row_is_a_batch_of_one_as_in_rollout():
    """An (N, 3) x0 is a batch for simulate as for rollout, N = 1 too (review: simulate used
    to drop the axis for one row with (K, C) commands); a (3,) x0 is one vehicle."""
    vehicle = ws.load_vehicle('indoor_differential')
    commands = [[0.2, 0.0, 0.1]] * 5
    batch = ws.simulate(vehicle, np.zeros((1, 3)), commands, DT_S)
    single = ws.simulate(vehicle, np.zeros(3), commands, DT_S)
    rolled = ws.rollout(vehicle, np.zeros((1, 3)), lambda state, t_s: [[0.2, 0.0, 0.1]], 5, DT_S)
    assert batch.x_m.shape == rolled.x_m.shape == (1, 6) and single.x_m.shape == (6,)
    np.testing.assert_array_equal(batch.x_m[0], single.x_m)
    np.testing.assert_array_equal(rolled.x_m, batch.x_m)


@pytest.mark.parametrize('preset, command_type, absurd', [
    ('indoor_differential', 'twist', [2e6, 0.0, -1e300]),
    ('indoor_differential', 'wheel_speeds', [1e9, -1e300]),
    ('mecanum_omni', 'wheel_speeds', [1e300, 1e300, -1e300, 1e300]),
    ('mecanum_omni', 'wheel_speeds', [1.7e308, 1.7e308, 1.7e308, -1.7e308]),  # sums overflow
    ('ackermann_car', 'speed_steering', [-1e300, 0.3]),
])
def test_any_finite_command_is_saturated_as_vehicle_sim_saturates_cmd_vel(preset, command_type,
                                                                          absurd):
    vehicle = ws.load_vehicle(preset)
    absurd_run = ws.simulate(vehicle, None, [absurd] * 20, DT_S, command_type=command_type)
    limits = vehicle.settings.cmd_vel_limits
    limit = np.array([limits.linear, limits.linear, limits.angular])
    saturated = absurd_run.command_twist[0]
    assert np.all(np.abs(saturated) <= limit) and np.isin(np.abs(saturated), limit).any()
    twist_run = ws.simulate(vehicle, None, [saturated] * 20, DT_S)
    for name in ('x_m', 'y_m', 'yaw_rad', 'vx_mps', 'wz_radps', 'command_twist'):
        np.testing.assert_array_equal(getattr(absurd_run, name),
                                      getattr(twist_run, name), err_msg=name)


def test_distance_errors_per_axis_and_per_vehicle(noisy_omni):
    """An omni base commanded sideways only: the sideways and planar errors are those of the
    trajectory's own speeds (the actuators lag, so it travels less), forward is NaN; a batch
    gives each vehicle's own errors."""
    commands = np.tile([0.0, 0.4, 0.0], (200, 1))
    single = ws.simulate(noisy_omni, (0.0, 0.0, 0.0), commands, DT_S, seeds=3)
    errors = single.distance_errors_rel()
    travelled_m = float(np.sum(np.abs(single.vy_mps[:-1]) * DT_S))
    assert errors['distance_error_y_rel'] == pytest.approx(1 - travelled_m / (0.4 * 200 * DT_S))
    assert 0.02 < errors['distance_error_y_rel'] < 0.5  # dead time and lag: short of 0.8 m
    assert math.isnan(errors['distance_error_x_rel'])
    batch = ws.simulate(noisy_omni, np.zeros((2, 3)), np.stack([commands, 2 * commands]),
                        DT_S, seeds=[3, 4])
    for name, values in batch.distance_errors_rel().items():
        assert values.shape == (2,)
        np.testing.assert_array_equal(values[0], errors[name])
        assert values[0] != values[1] or math.isnan(values[0]), name


@pytest.mark.parametrize('preset', ['indoor_differential', 'ackermann_car'])
def test_a_vehicle_that_cannot_move_sideways_is_asked_no_vy(preset):
    """Found in review: the vy a differential or bicycle vehicle ignores stayed in
    command_twist and counted as commanded distance (distance_error_y_rel 1.0, the planar
    error 0.27 instead of 0.09)."""
    vehicle = ws.load_vehicle(preset)
    sideways = ws.simulate(vehicle, None, np.tile([0.4, 0.3, 0.0], (300, 1)), DT_S)
    straight = ws.simulate(vehicle, None, np.tile([0.4, 0.0, 0.0], (300, 1)), DT_S)
    assert np.all(sideways.command_twist[:, 1] == 0.0)
    np.testing.assert_array_equal(sideways.command[:, 1], 0.3)  # as given
    np.testing.assert_array_equal(sideways.x_m, straight.x_m)
    assert sideways.distance_errors_rel() == pytest.approx(straight.distance_errors_rel(),
                                                           nan_ok=True)
    assert math.isnan(sideways.distance_errors_rel()['distance_error_y_rel'])


def test_batched_rollout_equals_single_rollouts():
    vehicle = ws.load_vehicle('ackermann_car')
    x0 = np.array([[0.0, 1.0, 0.2], [0.0, -1.5, 0.0], [2.0, 0.5, -0.3]])
    batch = ws.rollout(vehicle, x0, policy, 400, DT_S)
    assert batch.steering_rad.shape == (3, 401, 2)
    for i in range(3):
        assert_same(batch.vehicle(i), ws.rollout(vehicle, x0[i], policy, 400, DT_S))


def test_rollout_of_a_command_sequence_equals_simulate():
    vehicle = ws.load_vehicle('indoor_differential')
    commands = wavy_commands(200, 0.0)
    assert_same(ws.rollout(vehicle, (1.0, 2.0, 0.3), lambda _s, t: commands[round(t / DT_S)],
                           200, DT_S),
                ws.simulate(vehicle, (1.0, 2.0, 0.3), commands, DT_S))


TWIST_TOLERANCE = 1e-9  # the wheel-level -> twist -> wheel round trip rounds (1e-16 relative)


def assert_close(a: ws.Trajectory, b: ws.Trajectory) -> None:
    for name in ('x_m', 'y_m', 'yaw_rad', 'vx_mps', 'vy_mps', 'wz_radps', 'wheel_speed_radps',
                 'steering_rad'):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=0,
                                   atol=TWIST_TOLERANCE, err_msg=name)


def test_differential_wheel_speeds_give_the_trajectory_of_their_twist():
    vehicle = ws.load_vehicle('indoor_differential')
    twists = wavy_commands(300, 0.0) * [1.0, 0.0, 1.0]
    half_track = 0.5 * vehicle.config.active.track
    wheels = np.column_stack([twists[:, 0] - half_track * twists[:, 2],
                              twists[:, 0] + half_track * twists[:, 2]])  # (v_L, v_R)
    assert_close(ws.simulate(vehicle, None, wheels, DT_S, command_type='wheel_speeds'),
                 ws.simulate(vehicle, None, twists, DT_S))


def test_omni_wheel_speeds_give_the_trajectory_of_their_twist():
    vehicle = ws.load_vehicle('mecanum_omni', {'model_params.omni.base_link_offset': 0.3})
    twists = wavy_commands(300, 1.0)
    model = vehicle.config.active
    lever = 0.5 * (model.wheel_base + model.track)
    vx, vy, wz = twists.T
    vy_centre = vy - model.base_link_offset * wz  # the wheel centre moves with vy - b wz
    wheels = np.column_stack([vx - vy_centre - lever * wz, vx + vy_centre + lever * wz,
                              vx + vy_centre - lever * wz, vx - vy_centre + lever * wz])
    assert_close(ws.simulate(vehicle, None, wheels, DT_S, command_type='wheel_speeds'),
                 ws.simulate(vehicle, None, twists, DT_S))


@pytest.mark.parametrize('steered_drive', [False, True])
def test_speed_and_steering_give_the_trajectory_of_their_twist(steered_drive):
    vehicle = ws.load_vehicle('ackermann_car', {
        'model_params.bicycle.drive_on_steered_wheel': steered_drive})
    wheel_base = vehicle.config.active.wheel_base
    twists = wavy_commands(300, 0.0) * [3.0, 0.0, 0.5]
    steering = np.arctan2(wheel_base * twists[:, 2], twists[:, 0])
    speed = twists[:, 0] / np.cos(steering) if steered_drive else twists[:, 0]
    car = np.column_stack([speed, steering])
    assert_close(ws.simulate(vehicle, None, car, DT_S, command_type='speed_steering'),
                 ws.simulate(vehicle, None, twists, DT_S))


@pytest.fixture
def room_vehicle(tmp_path):
    """The indoor robot in a 4 m x 3 m walled room (walls 0.05 m thick at x = +-2 m)."""
    path = write_map(tmp_path, walled_room(4.0, 3.0), 0.05, (-2.0, -1.5, 0.0))
    return ws.load_vehicle('indoor_differential', {'world.map_yaml': str(path)})


def test_driving_into_a_wall_stops_the_footprint_before_it(room_vehicle):
    x0 = np.array([[0.0, 0.0, 0.0], [0.0, 0.5, math.pi], [0.0, -0.5, 0.0]])
    commands = np.zeros((3, 600, 3))
    commands[:, :, 0] = [[0.8], [0.8], [0.0]]  # two drive into a wall for 6 s, one stands still
    batch = ws.simulate(room_vehicle, x0, commands, DT_S)
    np.testing.assert_array_equal(batch.collisions, [1, 1, 0])
    for i in range(3):
        for k in range(batch.x_m.shape[1]):
            pose = (batch.x_m[i, k], batch.y_m[i, k], batch.yaw_rad[i, k])
            assert contact(room_vehicle.world, room_vehicle.footprint, pose) is None
    front_m = room_vehicle.footprint.corners[:, 0].max()  # 0.3 m ahead of base_link
    wall_m = 2.0 - 0.05
    assert wall_m - 0.05 < batch.x_m[0, -1] + front_m <= wall_m  # within a cell of the wall
    assert batch.vx_mps[0, -1] < 0.05  # held at the wall (pushing: stopped at every contact)
    assert_same(batch.vehicle(1), ws.simulate(room_vehicle, x0[1], commands[1], DT_S))


def test_a_section_for_every_node_gives_load_vehicle_what_vehicle_sim_declares(tmp_path):
    # as vehicle_sim starts with it: odom_frame is another node's; a section naming
    # vehicle_sim is taken whole, so an unknown parameter there is still an error
    shared = tmp_path / 'robot.yaml'
    shared.write_text('/**:\n  ros__parameters: {use_sim_time: false, odom_frame: odom}\n'
                      '/**/vehicle_sim:\n  ros__parameters: {model: omni}\n')
    vehicle = ws.load_vehicle(shared)
    assert vehicle.model == 'omni'
    assert dict(vehicle.parameters) == {'use_sim_time': False, 'model': 'omni'}
    named = tmp_path / 'named.yaml'
    named.write_text('/**/vehicle_sim:\n  ros__parameters: {model: omni, odom_frame: odom}\n')
    with pytest.raises(ValueError, match="unknown parameter 'odom_frame'"):
        ws.load_vehicle(named)


@pytest.mark.parametrize('call, message', [
    (lambda: ws.load_vehicle('no_such_preset'), r'preset_or_params_file.*presets: .*indoor'),
    (lambda: ws.load_vehicle('/no/such/file.yaml'), 'no such file'),
    # found in review: a folder was "no such file"; a rule across two parameters blamed the
    # one params did not set, without saying what params set
    (lambda: ws.load_vehicle('/tmp'), r"preset_or_params_file = '/tmp': a folder, not a params "
     'file'),
    (lambda: ws.load_vehicle(None, {'step_rate': 7.0}), r'parameter pub_rate = 50.0 is invalid: '
     r'must be <= step_rate \(7 Hz\) \(params set step_rate = 7.0\)$'),
    (lambda: ws.load_vehicle(None, {'model_params.differential.trak': 1.0}),
     r"unknown parameter 'model_params.differential.trak'.*'model_params.differential.track'"),
    (lambda: ws.load_vehicle(None, {'model_params.differential.track': -1.0}),
     r'model_params.differential.track = -1.0 .*\(0, 100\]'),
    (lambda: ws.load_vehicle(None, {'world.map_yaml': '/no/map.yaml'}), 'world.map_yaml'),
    (lambda: ws.simulate(DIFF, None, np.zeros((10, 2)), 0.01), r'commands must have shape '
     r'\(any, 3\)'),
    (lambda: ws.simulate(DIFF, None, [[0.1, 0.0, math.nan]], 0.01), 'commands must be finite'),
    (lambda: ws.simulate(DIFF, None, [['fast', 0.0, 0.0]], 0.01), 'commands must be an array '
     'of real numbers'),
    (lambda: ws.rollout(DIFF, [[0.0, 0.0], [0.0]], policy, 5, 0.01), 'x0 must be an array of '
     'real numbers'),
    (lambda: ws.simulate(DIFF, None, [[math.inf, 0.0, 0.0]], 0.01), 'commands must be finite'),
    # found in review: numpy dropped the imaginary part with a warning; a list was a TypeError
    (lambda: ws.simulate(DIFF, None, np.ones((3, 3)) * (1 + 1j), 0.01),
     'commands must be an array of real numbers'),
    (lambda: ws.load_vehicle('indoor_differential', [1, 2]), 'params must be a mapping of '
     'vehicle_sim parameter names to values'),
    (lambda: ws.simulate(DIFF, [0.0, 0.0], [[0.1, 0.0, 0.0]], 0.01), r'x0 must have shape '
     r'\(3,\)'),
    (lambda: ws.simulate(DIFF, np.zeros((3, 3)), np.zeros((2, 5, 3)), 0.01),
     r'x0 must have shape \(2, 3\)'),
    (lambda: ws.simulate(DIFF, None, np.zeros((0, 3, 3)), 0.01), r'commands must hold at '
     r'least one vehicle: \(N, K, 3\) with N >= 1, got shape \(0, 3, 3\)'),
    (lambda: ws.simulate(DIFF, np.zeros((0, 3)), np.zeros((3, 3)), 0.01), r'x0 must hold at '
     r'least one vehicle: \(N, 3\) with N >= 1, got shape \(0, 3\)'),
    (lambda: ws.rollout(DIFF, np.zeros((0, 3)), policy, 5, 0.01), 'x0 must hold at least one '
     'vehicle'),
    (lambda: ws.simulate(DIFF, None, np.zeros((5, 3)), 0.0015), r'dt_s = 0.0015 .*0.001 s'),
    (lambda: ws.simulate(DIFF, None, np.zeros((5, 3)), 'fast'), r"dt_s = 'fast' must be"),
    (lambda: ws.simulate(DIFF, None, np.zeros((5, 3)), math.nan), r'dt_s = nan must be'),
    (lambda: ws.simulate(DIFF, None, np.zeros((5, 3)), 0.01, seeds=[1, 2]), 'seeds must be '
     'one integer'),
    # found in review: True ran as seed 1, the noise of the vehicle given seed 1
    (lambda: ws.simulate(DIFF, np.zeros((2, 3)), np.zeros((5, 3)), 0.01, seeds=[1, True]),
     r'seeds must be 2 integers, one per vehicle, in \[0, 2\^63\), none masked, got \[1, '
     r'True\]'),
    # found in review: the value under a mask was taken; a seed out of range was named "seed"
    (lambda: ws.simulate(DIFF, np.zeros((2, 3)), np.zeros((5, 3)), 0.01,
                         seeds=np.ma.masked_array([1, 99], mask=[False, True])),
     r'seeds must be 2 integers, one per vehicle, in \[0, 2\^63\), none masked'),
    (lambda: ws.simulate(DIFF, None, np.zeros((5, 3)), 0.01,
                         seeds=np.ma.masked_array(7, mask=True)),
     r'seeds must be one integer in \[0, 2\^63\), none masked'),
    (lambda: ws.simulate(DIFF, np.zeros((2, 3)), np.zeros((5, 3)), 0.01,
                         seeds=np.array([1, 2**63], dtype=np.uint64)),
     r'seeds must be 2 integers, one per vehicle, in \[0, 2\^63\)'),
    (lambda: ws.simulate(DIFF, None, np.zeros((5, 3)), 0.01, seeds=-1),
     r'seeds must be one integer in \[0, 2\^63\), none masked, got -1'),
    (lambda: ws.simulate(DIFF, None, np.zeros((5, 2)), 0.01, command_type='speed_steering'),
     r"'speed_steering' is not for the differential model: it is for bicycle"),
    (lambda: ws.simulate(DIFF, None, np.zeros((5, 3)), 0.01, command_type='wheels'),
     r"command_type = 'wheels' must be one of \['twist'"),
    (lambda: ws.rollout(DIFF, None, lambda s, t: [0.1, 0.0], 5, 0.01),
     r'policy\(state, t_s\) must have shape \(3,\)'),
    (lambda: ws.rollout(DIFF, np.zeros((4, 3)), lambda s, t: [0.1, 0.0, 0.0], 5, 0.01),
     r'policy\(state, t_s\) must have shape \(4, 3\)'),
    (lambda: ws.rollout(DIFF, None, lambda s, t: [0.1, 0.0, math.nan], 5, 0.01),
     r'policy\(state, t_s\) must be finite'),
    (lambda: ws.rollout(DIFF, None, None, 5, 0.01), 'policy must be a callable'),
    # found in review: a one-argument policy raised a bare TypeError from inside the loop
    (lambda: ws.rollout(DIFF, None, lambda observation: [0.1, 0.0], 5, 0.01),
     r'policy <lambda>\(observation\) cannot be called as policy\(state, t_s\)'),
    (lambda: ws.rollout(DIFF, None, policy, -1, 0.01), 'n_steps = -1 must be an integer'),
    # found in review: numpy converted bool and text arrays to numbers (the sticks refused them)
    (lambda: ws.simulate(DIFF, None, np.ones((5, 3), dtype=bool), 0.01),
     r"commands must be an array of real numbers \(3 values of 'twist' per command\)"),
    (lambda: ws.simulate(DIFF, None, [['0.5', '0', '0']], 0.01),
     'commands must be an array of real numbers'),
    (lambda: ws.simulate(DIFF, np.array([True, False, False], dtype=object), np.zeros((5, 3)),
                         0.01), r'x0 must be an array of real numbers \(x_m, y_m, yaw_rad\)'),
    (lambda: ws.rollout(DIFF, None, lambda s, t: np.ones(3, dtype=bool), 5, 0.01),
     r'policy\(state, t_s\) must be an array of real numbers'),
    # found in the next review: a bool among numbers in a list was taken as 1 or 0
    (lambda: ws.simulate(DIFF, None, [[0.5, 0.0, True]], 0.01),
     r"commands must be an array of real numbers \(3 values of 'twist' per command\)"),
    (lambda: ws.simulate(DIFF, [0.0, np.False_, 0.0], np.zeros((5, 3)), 0.01),
     r'x0 must be an array of real numbers'),
    (lambda: ws.rollout(DIFF, None, lambda s, t: [0.1, 0, False], 5, 0.01),
     r'policy\(state, t_s\) must be an array of real numbers'),
    (lambda: ws.simulate(DIFF, None, [np.zeros(3), np.ones(3, dtype=bool)], 0.01),
     'commands must be an array of real numbers'),
    # found in review: a steering angle out of range was found when its period came (after
    # simulating the ones before) and blamed on commands in a rollout too
    (lambda: ws.simulate(CAR, None, [[3.0, 0.3]] * 50 + [[3.0, 2.0]], 0.01,
                         command_type='speed_steering'),
     r'commands: steering_rad must be in \(-pi/2, pi/2\), got 2 at index 50$'),
    (lambda: ws.rollout(CAR, None, lambda s, t: [3.0, 0.3 if t < 0.1 else -1.6], 20, 0.01,
                        command_type='speed_steering'),
     r'policy\(state, t_s\) at t_s = 0.1: steering_rad must be in \(-pi/2, pi/2\), got -1.6$'),
    # found in review: the values under a mask were taken (a masked dt_s was refused)
    (lambda: ws.simulate(DIFF, np.ma.masked_array([5.0, 5.0, 0.0], mask=[1, 1, 1]),
                         np.zeros((1, 3)), 0.01),
     r'x0 must be an array of real numbers \(x_m, y_m, yaw_rad\), none masked'),
    (lambda: ws.simulate(DIFF, None, np.ma.masked_array(np.zeros((5, 3)), mask=True), 0.01),
     'commands must be an array of real numbers .*, none masked'),
    # found in review: an AttributeError, text and bools taken as numbers, a control period of
    # 10**15 steps that ran until killed, a TypeError, a shape asked for that x0 need not have
    (lambda: ws.simulate('indoor_differential', None, np.zeros((5, 3)), 0.01),
     "vehicle must be a SimVehicle .*got str 'indoor_differential'"),
    (lambda: ws.rollout(None, None, policy, 5, 0.01), 'vehicle must be a SimVehicle'),
    (lambda: ws.simulate(np.zeros((3, 3)), None, np.zeros((5, 3)), 0.01),
     r'vehicle must be a SimVehicle .*got ndarray array\(\[\[[^\n]*$'),  # one line
    (lambda: ws.simulate(DIFF, None, np.zeros((5, 3)), '0.01'), r"dt_s = '0.01' must be a "
     r'number of seconds in \(0, 3600\]'),
    (lambda: ws.simulate(DIFF, None, np.zeros((5, 3)), True), 'dt_s = True must be'),
    (lambda: ws.simulate(DIFF, None, np.zeros((10, 3)), 1e12), r'dt_s = 1000000000000.0 must be'),
    (lambda: ws.simulate(DIFF, None, np.zeros((5, 3)), 0.01, command_type=['twist']),
     r"command_type = \['twist'\] must be one of"),
    (lambda: ws.simulate(DIFF, 0.0, np.zeros((5, 3)), 0.01), r'x0 must have shape \(3,\) '
     r'\(x_m, y_m, yaw_rad\) or \(N, 3\)'),
    (lambda: ws.simulate(DIFF, None, np.zeros((2, 5, 3)), 0.01).vehicle(2),
     r'index = 2 must be an integer in \[-2, 2\)'),
    (lambda: ws.simulate(DIFF, None, np.zeros((2, 5, 3)), 0.01).vehicle(1.0),
     r'index = 1.0 must be an integer'),
])
def test_bad_input_raises_a_value_error_naming_it(call, message):
    with pytest.raises(ValueError, match=message):
        call()


DIFF = ws.load_vehicle('indoor_differential')
CAR = ws.load_vehicle('ackermann_car')
OMNI = ws.load_vehicle('mecanum_omni')


def test_a_trajectory_too_large_for_memory_names_n_steps():
    """Found in review: numpy's MemoryError named the array's size, not the argument."""
    with pytest.raises(MemoryError, match=r'^n_steps = 1000000000000 for 3 vehicle\(s\): no '
                       r'memory for the trajectory \(Unable to allocate'):
        ws.rollout(DIFF, np.zeros((3, 3)), lambda s, t: np.zeros((3, 3)), 10**12, 0.01)


@pytest.mark.parametrize('n_steps', [10**18, 2**63, np.int64(2**63 - 1), np.uint64(2**64 - 1)])
def test_a_trajectory_larger_than_any_array_names_n_steps(n_steps):
    """Found in review: numpy's ValueError ("array is too big", "Maximum allowed dimension
    exceeded"), and n_steps + 1 wrapping around for a numpy integer."""
    with pytest.raises(MemoryError, match=rf'^n_steps = {int(n_steps)} for 1 vehicle\(s\): no '
                       'memory for the trajectory'):
        ws.rollout(DIFF, None, lambda s, t: np.zeros(3), n_steps, 0.01)


def test_plots_return_figures(room_vehicle):
    trajectory = ws.simulate(room_vehicle, None, np.tile([0.5, 0.0, 0.4], (300, 1)), DT_S)
    reference = np.column_stack([trajectory.x_m + 0.01, trajectory.y_m, trajectory.yaw_rad])
    for figure in (ws.plot_trajectory(trajectory, room_vehicle, reference=reference),
                   ws.plot_speeds(trajectory),
                   ws.plot_tracking_errors(trajectory, reference)):
        assert figure.axes and figure.axes[0].lines
    with pytest.raises(ValueError, match=r'reference must have shape \(301, 2\)'):
        ws.plot_tracking_errors(trajectory, reference[:10])


@pytest.mark.parametrize('call, message', [
    (lambda t, v: ws.plot_trajectory(t, v, footprint_every_s=math.nan), 'footprint_every_s = '
     'nan must be a finite number > 0'),
    (lambda t, v: ws.plot_trajectory(t, v, footprint_every_s=math.inf), 'footprint_every_s'),
    (lambda t, v: ws.plot_trajectory(t, v, footprint_every_s=0.0), 'footprint_every_s'),
    (lambda t, v: ws.plot_trajectory(t, v, footprint_every_s=-1.0), 'footprint_every_s'),
    (lambda t, v: ws.plot_trajectory(t, v, reference=[1, 2, 3]), r'reference must have shape '
     r'\(M, 2\) or \(M, 3\) .*got shape \(3,\)'),
    (lambda t, v: ws.plot_trajectory(t, None), 'vehicle must be a SimVehicle'),
    (lambda t, v: ws.plot_tracking_errors(t, 'abc'), 'reference must have shape .*got no '
     'array of real numbers'),
    # found in review: complex (imaginary part dropped), bool and masked references were taken
    (lambda t, v: ws.plot_tracking_errors(t, np.zeros((len(t.t_s), 3), complex)),
     'reference must have shape .*got no array of real numbers'),
    (lambda t, v: ws.plot_tracking_errors(t, np.zeros((len(t.t_s), 3), bool)),
     'reference must have shape .*got no array of real numbers'),
    (lambda t, v: ws.plot_tracking_errors(t, [[True, 0, 0]] + [[0, 0, 0]] * (len(t.t_s) - 1)),
     'reference must have shape .*got no array of real numbers'),
    (lambda t, v: ws.plot_tracking_errors(t, np.ma.masked_array(
        np.zeros((len(t.t_s), 3)), mask=np.eye(len(t.t_s), 3, dtype=bool))),
     'reference must have shape .*got no array of real numbers'),
    (lambda t, v: ws.plot_trajectory(None, v), 'trajectory must be a Trajectory .*got NoneType'),
    (lambda t, v: ws.plot_trajectory(t.pose, v), r'trajectory must be a Trajectory .*got ndarray '
     r'array\(\[\[[^\n]*$'),  # one line
    (lambda t, v: ws.plot_speeds(v), 'trajectory must be a Trajectory .*got SimVehicle'),
    (lambda t, v: ws.plot_tracking_errors(t.pose, t.pose), 'trajectory must be a Trajectory'),
    # found in review: an all-NaN reference drew nothing, a car's footprint drew a robot's path
    (lambda t, v: ws.plot_trajectory(t, v, reference=np.full((4, 3), np.nan)),
     r'reference must be finite \(x_m, y_m\[, yaw_rad\]\), got 4 of 4 rows with NaN'),
    (lambda t, v: ws.plot_tracking_errors(t, np.where(t.pose > 1e9, 0.0, np.inf)),
     'reference must be finite'),
    (lambda t, v: ws.plot_trajectory(t, ws.load_vehicle('ackermann_car')),
     r'vehicle must be of the kind that drove the trajectory: its joints are .*steering.*, '
     r"the trajectory's left_wheel_joint, right_wheel_joint$"),
])
def test_bad_plot_arguments_are_refused_by_name(call, message):
    """Found in review: numpy's and Python's errors from inside (NaN to integer, too many
    indices), a footprint at every sample for 0 or a negative period, and an AttributeError
    ('t_s') for a trajectory that is no Trajectory (its pose array, say)."""
    trajectory = ws.simulate(DIFF, None, np.tile([0.5, 0.0, 0.4], (50, 1)), DT_S)
    with pytest.raises(ValueError, match=message):
        call(trajectory, DIFF)


def test_one_real_number_of_any_kind_is_taken_where_a_number_goes():
    """Found in review of the checks above: a 0-d array and a Decimal, taken before, were
    refused; float32's 0.01 s was refused as no whole number of steps."""
    from decimal import Decimal

    commands = np.tile([0.5, 0.0, 0.4], (20, 1))
    expected = ws.simulate(DIFF, None, commands, 0.01)
    for dt_s in (np.array(0.01), Decimal('0.01'), np.float32(0.01), np.float64(0.01)):
        np.testing.assert_array_equal(ws.simulate(DIFF, None, commands, dt_s).x_m,
                                      expected.x_m)
    batch = ws.simulate(DIFF, np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 0.0]]), commands, 0.01)
    np.testing.assert_array_equal(batch.vehicle(np.array(1)).y_m, batch.y_m[1])
    np.testing.assert_array_equal(batch.vehicle(np.int64(-2)).y_m, batch.y_m[0])
    with warnings.catch_warnings():  # found in CI: numpy's overflow warning
        warnings.simplefilter('error', RuntimeWarning)
        figure = ws.plot_trajectory(expected, DIFF, footprint_every_s=1e308)  # first and last
    assert len(figure.axes[0].patches) == 2
    env = ws.PathTrackingEnv(DIFF, speed_mps=np.array(0.5), dt_s=Decimal('0.05'))
    env.reset(seed=0)
    assert env._task.period_s == 0.05 and env._task.speed_mps == 0.5


@pytest.mark.parametrize('dt_s', [
    np.array(True), np.array('0.01'), np.complex128(0.01 + 1j), 2000.0015, 0.0105,
    np.array([0.01]),
    # found in the next reviews: float32 and float16 values between two step counts, too large
    # a number, a ragged list, a masked value
    np.float32(2000.0015), np.float32(3000.0015), np.float16(0.3005), 10**400,
    [[0.01], [0.01, 0.02]], np.ma.masked_array(0.01, mask=True)])
def test_what_is_no_single_real_number_or_no_whole_number_of_steps_is_refused(dt_s):
    """Found in review of the check above: a 0-d bool or text array and a complex number were
    taken, and the tolerance for float32 let 2000.0015 s run as 2000.002 s."""
    with pytest.raises(ValueError, match='(?s)dt_s = .* must be a number of seconds'):
        ws.simulate(DIFF, None, np.zeros((1, 3)), dt_s)


@pytest.mark.parametrize('step_rate_hz, dt_s, steps', [
    (1000.0, 3 * 0.1, 300), (1000.0, 0.7, 700), (300.0, 3600.0, 1_080_000),
    (300.0, 3599.7, 1_079_910), (1000.0, np.float16(0.01), 10),
    # found in the next review: periods read back from a time grid or a sum were refused
    (1000.0, 1.02 - 1.0, 20), (1000.0, sum([0.001] * 11), 11),
    (1000.0, np.diff(np.arange(0.0, 3600.02, 0.02))[-1], 20),
    (999.9, np.float32(29) * (np.float32(1) / np.float32(999.9)), 29),
    (100_000.0, np.diff(np.arange(800_002) * 1e-5)[-1], 1), (1000.0, 1.0000000009, 1000)])
def test_a_period_within_its_own_rounding_of_whole_steps_is_taken(step_rate_hz, dt_s, steps):
    """Found in review: 3600 s, the largest period the error message names, was refused at
    300 Hz (3600 * (1 / 300) * 300 rounds above 3600)."""
    from wheelsim.sim.rollout import _steps_per_period

    vehicle = ws.load_vehicle('indoor_differential', {'step_rate': step_rate_hz,
                                                      'clock_rate': 50.0})
    assert _steps_per_period(vehicle, dt_s) == steps


def test_numpy_values_are_taken_as_the_python_values_they_hold():
    """Found in review: np.int64(3) as seed, np.float32(500) as step_rate, np.bool_(False) as
    world.collisions were refused as 'seed = 3 is invalid: must be an integer in [0, ...]'."""
    python = {'seed': 3, 'step_rate': 500.0, 'world.collisions': False,
              'model_params.differential.track': 0.5,
              'footprint': [0.5, 0.25, -0.5, 0.25, -0.5, -0.25, 0.5, -0.25]}
    numpy = {'seed': np.int64(3), 'step_rate': np.float32(500.0),
             'world.collisions': np.bool_(False),
             'model_params.differential.track': np.array(0.5),
             'footprint': np.array(python['footprint'], dtype=np.float32)}
    expected = ws.load_vehicle('indoor_differential', python)
    vehicle = ws.load_vehicle('indoor_differential', numpy)
    assert vehicle.parameters == expected.parameters
    assert vehicle.settings == expected.settings
    assert vehicle.config == expected.config


@pytest.mark.parametrize('params, name', [
    ({'initial_pose.x': np.ma.masked}, 'initial_pose.x'),
    ({'initial_pose': {'y': np.ma.array(1.0, mask=True)}}, 'initial_pose.y'),
    ({'footprint': [0.5, np.ma.masked, -0.5, 0.25, -0.5, -0.25]}, 'footprint'),
])
def test_a_masked_parameter_is_refused_naming_it(params, name):
    """Found in review: a masked initial_pose.x was refused as 'initial_pose.x = None'."""
    with pytest.raises(ValueError) as info:
        ws.load_vehicle('indoor_differential', params)
    assert str(info.value) == (f'parameter {name} = masked is invalid: a masked value '
                               '(numpy.ma) has no value to take')
    unmasked = {'initial_pose.x': np.ma.array(1.0, mask=False)}
    assert ws.load_vehicle('indoor_differential', unmasked).parameters['initial_pose.x'] == 1.0


def test_a_params_file_without_a_section_for_vehicle_sim_is_refused(tmp_path):
    """Found in review: the default vehicle, without a word."""
    empty, elsewhere = tmp_path / 'empty.yaml', tmp_path / 'robot1.yaml'
    empty.write_text('')
    elsewhere.write_text('/robot1/vehicle_sim:\n  ros__parameters:\n    model: omni\n')
    for path, sections in ((empty, 'none'), (elsewhere, '/robot1/vehicle_sim')):
        with pytest.raises(ValueError, match=f'no section ROS gives vehicle_sim .*its '
                                             f'sections: {sections}'):
            ws.load_vehicle(path)
    shared = tmp_path / 'shared.yaml'
    shared.write_text('/**:\n  ros__parameters:\n    seed: 4\n    odom_frame: odom\n')
    assert ws.load_vehicle(shared).settings.seed == 4  # /** is given to vehicle_sim


def test_vehicles_and_trajectories_compare_by_identity():
    """Found in review: ``==`` of two of them raised numpy's "truth value of an array is
    ambiguous" (the dataclasses compared their arrays)."""
    commands = np.tile([0.5, 0.0, 0.4], (5, 1))
    first, second = ws.simulate(DIFF, None, commands, 0.01), ws.simulate(DIFF, None, commands, 0.01)
    other = ws.load_vehicle('indoor_differential')
    assert first == first and first != second and DIFF == DIFF and DIFF != other
    assert len({first, second, DIFF, other}) == 4  # hashable by identity too
