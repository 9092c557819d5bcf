"""Odometry from wheel encoders: exact on ideal wheels, and slip, locking, radius errors and
encoder ticks turned into the odometry errors they cause."""

import math
from dataclasses import replace

import numpy as np
import pytest

from wheelsim.core.geometry.se2 import compose_floats, inverse_floats
from wheelsim.core.localization.config import LocalizationConfig
from wheelsim.core.localization.model import Localization
from wheelsim.core.params import from_flat
from wheelsim.core.vehicle.model import Vehicle
from wheelsim.core.vehicle.traction import GRAVITY_MPS2
from wheelsim.testing.vehicles import ideal_config

DT = 1e-3
PUBLISH_EVERY = 20  # 50 Hz, as vehicle_sim publishes


def localization(**encoders):
    values = {'mode': 'noisy', 'odometry_source': 'joint_states',
              'localization.odom_walk_velocity_translation': 0.0,
              'localization.odom_walk_velocity_rotation': 0.0,
              'localization.odom_walk_turn_rotation': 0.0}
    values.update({f'encoders.{k}': v for k, v in encoders.items()})
    return Localization(from_flat(LocalizationConfig, values))


def drive(vehicle, loc, commands, seconds_each):
    """Run the vehicle, feeding joint_states then ground truth at 50 Hz; return (odometry
    pose, true motion since the start) after each command."""
    out = []
    start = None
    for command in commands:
        vehicle.set_command(*command)
        for _ in range(round(seconds_each / (DT * PUBLISH_EVERY))):
            vehicle.step(PUBLISH_EVERY)
            state = vehicle.state()
            stamp = state.elapsed_steps * 1_000_000
            loc.encoders.update(stamp, vehicle.joint_names, state.joint_positions_rad)
            assert loc.ready(stamp)
            result = loc.step(stamp, (state.x_m, state.y_m, state.yaw_rad),
                              (state.vx_mps, state.vy_mps, state.wz_radps))
            start = start or (state.x_m, state.y_m, state.yaw_rad)
        out.append((result.odom_T_base, (state.x_m, state.y_m, state.yaw_rad)))
    return out, start


CASES = {
    'differential': (dict(track=0.6, vis_tire_diameter=0.2),
                     dict(model='differential', track=0.6, wheel_radius=0.1)),
    'bicycle': (dict(wheel_base=1.2, vis_tire_diameter=0.3, vis_track_steered=0.8,
                     **{'steering_actuator.max_position': 0.6}),
                dict(model='bicycle', wheel_base=1.2, wheel_radius=0.15)),
    'bicycle_rear_steer_offset': (dict(wheel_base=1.2, vis_tire_diameter=0.3, reverse=True,
                                       base_link_offset=0.4, vis_track_steered=0.0,
                                       **{'steering_actuator.max_position': 0.6}),
                                  dict(model='bicycle', wheel_base=-1.2, wheel_radius=0.15,
                                       base_link_offset=0.4)),
    'omni': (dict(wheel_base=0.5, track=0.4, vis_wheel_diameter=0.1),
             dict(model='omni', wheel_base=0.5, track=0.4, wheel_radius=0.05)),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_ideal_encoders_give_the_true_motion(case):
    vehicle_leaves, encoders = CASES[case]
    model = encoders['model']
    vehicle = Vehicle(ideal_config(model, **vehicle_leaves), DT)
    loc = localization(**encoders)
    commands = [(0.8, 0.2, 0.0), (0.8, 0.0, 0.4), (-0.5, 0.3, -0.3), (0.6, -0.2, 0.5)]
    results, start = drive(vehicle, loc, commands, 3.0)
    assert_true_motion(results, start)  # truth relative to the start pose (odom's origin)


def assert_true_motion(results, start):
    for odom, truth in results:
        dx, dy = truth[0] - start[0], truth[1] - start[1]
        c, s = math.cos(start[2]), math.sin(start[2])
        np.testing.assert_allclose(odom[:2], (c * dx + s * dy, -s * dx + c * dy), atol=1e-9)
        assert math.remainder(odom[2] - truth[2] + start[2], 2 * math.pi) == pytest.approx(
            0, abs=1e-9)


@pytest.mark.parametrize('steered_track_m', [0.0, 1.0], ids=['one steered wheel', 'a pair'])
@pytest.mark.parametrize('command', [(0.0, 0.0, 0.5), (0.02, 0.0, 0.5), (0.0, 0.0, -0.2)])
def test_turning_about_the_fixed_axle_is_measured_by_the_steered_wheels(steered_track_m,
                                                                        command):
    """Found in review: a forklift (steering unlimited) turning on the spot about its fixed axle
    had odometry headings of rounding noise times tan(90 degrees): 0.73 rad for 1.49."""
    vehicle = Vehicle(ideal_config('bicycle', wheel_base=2.0, reverse=True,
                                   drive_on_steered_wheel=True, vis_track_fixed=1.1,
                                   vis_track_steered=steered_track_m, vis_tire_diameter=0.4,
                                   **{'steering_actuator.max_position': 0.0}), DT)
    loc = localization(model='bicycle', wheel_base=-2.0, wheel_radius=0.2)
    results, start = drive(vehicle, loc, [command, (0.3, 0.0, 0.1)], 3.0)
    assert abs(results[0][1][2] - start[2]) > 0.5  # it turned
    assert_true_motion(results, start)


def test_wheel_slip_becomes_heading_drift():
    """Left wheel slipping 10 %: the ground turns left, the encoders see a straight line."""
    vehicle = Vehicle(ideal_config('differential', track=0.6, vis_tire_diameter=0.2,
                                   slip_left=0.1), DT)
    loc = localization(model='differential', track=0.6, wheel_radius=0.1)
    [(odom, truth)], start = drive(vehicle, loc, [(1.0, 0.0, 0.0)], 4.0)
    assert odom[2] == pytest.approx(0.0, abs=1e-12)
    assert odom[0] == pytest.approx(4.0 - 0.02, abs=1e-9)  # started after the first sample
    assert truth[2] == pytest.approx(0.1 / 0.6 * 4.0, rel=1e-9)  # wz = (1 - 0.9) / 0.6


def test_the_odometry_twist_is_never_the_true_one():
    """Found in review: at the first sample, a repeated stamp and after a time jump the
    published twist was the ground truth's (the wheels here roll at 1 m/s, the truth says
    0.7 m/s)."""
    loc = localization(model='differential', track=0.6, wheel_radius=0.28)
    names = ['left_wheel_joint', 'right_wheel_joint']
    published = []
    for k, t_s in enumerate([1.00, 1.02, 1.04, 1.04, 1.06, 0.50, 0.52]):
        stamp = round(t_s * 1e9)
        angle = math.remainder(k * 0.02 / 0.28, 2 * math.pi)
        loc.encoders.update(stamp, names, [angle, angle])
        published.append(loc.step(stamp, (0.0, 0.0, 0.0), (0.7, 0.0, 0.1)).twist)
    np.testing.assert_allclose(published, [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (1.0, 0.0, 0.0),
                                           (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 0.0),
                                           (1.0, 0.0, 0.0)], atol=1e-9)


def test_the_believed_odometry_error_grows_with_the_motion_the_wheels_measured():
    """Found in review: the odometry covariance and the EKF's prediction noise came from the
    true motion, so wheels spinning under a vehicle that stood still gave odometry running away
    with a covariance of 0 (and an EKF following it at NEES 1e7)."""
    values = {'mode': 'ekf', 'odometry_source': 'joint_states',
              'encoders.model': 'differential', 'encoders.track': 0.6,
              'encoders.wheel_radius': 0.28}
    names = ['left_wheel_joint', 'right_wheel_joint']

    def run(moving):
        """Wheels turning the robot by 90 degrees on the spot (1 s), then rolling 1 m/s
        (5 s), at 50 Hz: the vehicle moving so, or standing still."""
        loc = Localization(from_flat(LocalizationConfig, values))
        left = right = 0.0
        pose = (0.0, 0.0, 0.0)
        for k in range(301):
            stamp = 1_000_000_000 + k * 20_000_000
            turning = k <= 50
            arc = 0.3 * math.pi / 2 / 50 if turning else 0.02  # per wheel, per sample [m]
            if k:
                left, right = left + (-arc if turning else arc), right + arc
                pose = ((pose[0], pose[1], pose[2] + math.pi / 100) if turning
                        else (pose[0], pose[1] + 0.02, pose[2]))
            loc.encoders.update(stamp, names, [math.remainder(left / 0.28, 2 * math.pi),
                                               math.remainder(right / 0.28, 2 * math.pi)])
            twist = (0.0, 0.0, math.pi / 2) if turning else (1.0, 0.0, 0.0)
            out = loc.step(stamp, pose if moving else (0.0, 0.0, 0.0),
                           twist if moving else (0.0, 0.0, 0.0))
        return out

    spinning, rolling = run(moving=False), run(moving=True)
    np.testing.assert_allclose(spinning.odom_T_base, (0.0, 5.0, math.pi / 2), atol=1e-9)
    np.testing.assert_allclose(spinning.odom_covariance, rolling.odom_covariance, rtol=1e-9,
                               atol=1e-15)
    # heading error spreads the position across the way the robot went (x), not along it
    assert spinning.odom_covariance[0, 0] > 10 * spinning.odom_covariance[1, 1] > 0.0
    # the EKF, fixed by the map poses of the vehicle standing at 0, stays near them
    assert math.hypot(*spinning.map_T_base[:2]) < 0.5


def test_locked_wheels_stop_the_odometry_while_the_vehicle_slides():
    mu = 0.4
    vehicle = Vehicle(ideal_config('differential', track=0.6, vis_tire_diameter=0.2,
                                   friction_coefficient=mu), DT)
    loc = localization(model='differential', track=0.6, wheel_radius=0.1)
    results, _ = drive(vehicle, loc, [(2.0, 0.0, 0.0), (0.0, 0.0, 0.0)], 2.0)
    (odom_moving, truth_moving), (odom_stopped, truth_stopped) = results
    slid = truth_stopped[0] - truth_moving[0]
    assert slid == pytest.approx(2.0 ** 2 / (2 * mu * GRAVITY_MPS2), abs=2.0 * DT)
    assert odom_stopped[0] - odom_moving[0] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize('error', [-0.02, 0.05])
def test_wheel_radius_error_scales_the_distance(error):
    vehicle = Vehicle(ideal_config('differential', track=0.6, vis_tire_diameter=0.2), DT)
    loc = localization(model='differential', track=0.6, wheel_radius=0.1,
                       wheel_radius_error=error)
    [(odom, truth)], start = drive(vehicle, loc, [(1.0, 0.0, 0.0)], 5.0)
    assert odom[0] == pytest.approx((1 + error) * (truth[0] - start[0]), rel=1e-12)


def test_encoder_ticks_quantise_the_distance():
    ticks = 100
    vehicle = Vehicle(ideal_config('differential', track=0.6, vis_tire_diameter=0.2), DT)
    loc = localization(model='differential', track=0.6, wheel_radius=0.1, resolution=ticks)
    [(odom, truth)], start = drive(vehicle, loc, [(0.37, 0.0, 0.0)], 3.0)
    tick_m = 2 * math.pi / ticks * 0.1
    travelled = truth[0] - start[0]
    assert odom[0] == pytest.approx(math.floor(travelled / tick_m) * tick_m, abs=tick_m)
    assert odom[0] <= travelled
    assert odom[0] / tick_m == pytest.approx(round(odom[0] / tick_m), abs=1e-9)


def test_encoders_need_the_model_joints_and_a_real_mode():
    loc = localization(model='omni')
    with pytest.raises(ValueError, match='front_left_wheel_joint'):
        loc.encoders.update(0, ('left_wheel_joint', 'right_wheel_joint'), (0.0, 0.0))
    with pytest.raises(ValueError, match='odometry_source'):
        from_flat(LocalizationConfig, {'mode': 'perfect', 'odometry_source': 'joint_states'})


@pytest.mark.parametrize('model, encoders, said', [
    ('differential', {'model': 'differential', 'track': 0.5}, []),
    ('differential', {'model': 'differential'}, ["encoders.track = 1.4 m, the vehicle's 0.5 m"]),
    ('differential', {'model': 'differential', 'track': 0.5, 'base_link_offset': 0.1},
     ["encoders.base_link_offset = 0.1 m, the vehicle's 0 m"]),
    ('differential', {}, []),  # auto: the vehicle's own
    ('differential', {'model': 'omni', 'track': 0.5}, ["encoders.model = 'omni', the vehicle's "
                                                       "'differential'"]),
    ('bicycle', {'model': 'bicycle', 'wheel_base': 2.5}, []),
    ('bicycle', {'model': 'bicycle', 'wheel_base': 2.5, 'track': 9.0}, []),  # no track used
    ('bicycle', {'model': 'bicycle'}, ["encoders.wheel_base = 2 m, the vehicle's 2.5 m"]),
])
def test_the_geometry_that_differs_from_the_vehicle_s_is_named(model, encoders, said):
    """Found in review: with odometry_source joint_states on the 0.5 m-track preset the default
    encoders.track of 1.4 m went unnoticed, and the odometry's NEES was 467."""
    from wheelsim.core.localization.wheel_encoders import EncoderConfig, geometry_mismatches
    from wheelsim.core.vehicle.config import vehicle_config_from_params
    from wheelsim.core.vehicle.description import describe

    params = {'model': model, 'model_params.differential.track': 0.5,
              'model_params.bicycle.wheel_base': 2.5}
    vehicle = describe(vehicle_config_from_params(params))
    assert geometry_mismatches(EncoderConfig(**encoders), vehicle) == said


def test_a_wheel_radius_off_the_vehicle_s_urdf_is_named():
    """Found in review: on the 0.5 m-track preset, encoders.track 0.5 with the default
    encoders.wheel_radius (0.28 m; the vehicle's wheels 0.1 m, in its URDF) went unnoticed:
    every distance 2.8 times too long."""
    from wheelsim.core.localization.wheel_encoders import EncoderConfig, geometry_mismatches
    from wheelsim.core.vehicle.config import vehicle_config_from_params
    from wheelsim.core.vehicle.description import describe
    from wheelsim.core.vehicle.urdf import build_urdf

    config = vehicle_config_from_params({'model': 'differential',
                                         'model_params.differential.track': 0.5})
    vehicle = describe(config, build_urdf(config))
    given = {'model': 'differential', 'track': 0.5}
    assert geometry_mismatches(EncoderConfig(**given), vehicle) == [
        "encoders.wheel_radius = 0.28 m, the vehicle's 0.1 m"]
    assert geometry_mismatches(EncoderConfig(**given, wheel_radius=0.1), vehicle) == []
    # a radius error is a calibration error on purpose, not a wrong geometry
    assert geometry_mismatches(EncoderConfig(**given, wheel_radius=0.1,
                                             wheel_radius_error=0.02), vehicle) == []


def test_a_steered_axle_behind_is_a_negative_encoder_wheel_base():
    from wheelsim.core.localization.wheel_encoders import EncoderConfig, geometry_mismatches
    from wheelsim.core.vehicle.config import vehicle_config_from_params
    from wheelsim.core.vehicle.description import describe

    vehicle = describe(vehicle_config_from_params({
        'model': 'bicycle', 'model_params.bicycle.reverse': True}))
    assert vehicle.steered_axle_behind
    assert geometry_mismatches(EncoderConfig(model='bicycle', wheel_base=-2.0), vehicle) == []


@pytest.mark.parametrize('case', sorted(CASES))
def test_model_auto_takes_the_vehicle_s_geometry(case):
    """Found in review: the encoders.* defaults were a reference vehicle's (1.4 m track, 0.28 m
    wheels): on the 0.5 m-track preset the odometry drifted 8.0 m in a 10 s run that drove
    4.7 m. With model auto (the default) it is the vehicle's own, as each case's odometry."""
    from wheelsim.core.localization.wheel_encoders import EncoderConfig, with_vehicle
    from wheelsim.core.vehicle.description import describe
    from wheelsim.core.vehicle.urdf import build_urdf

    vehicle_leaves, encoders = CASES[case]
    config = ideal_config(encoders['model'], **vehicle_leaves)
    resolved = with_vehicle(EncoderConfig(resolution=1024, wheel_radius_error=0.01),
                            describe(config, build_urdf(config)))
    assert resolved == EncoderConfig(**encoders, resolution=1024, wheel_radius_error=0.01)
    given = EncoderConfig(**encoders)
    assert with_vehicle(given, describe(config, build_urdf(config))) is given


def test_model_auto_refuses_a_geometry_given_and_waits_for_the_vehicle():
    from wheelsim.core.localization.wheel_encoders import EncoderConfig, EncoderOdometry
    from wheelsim.core.params import ParameterError
    from wheelsim.core.vehicle.description import DescriptionError, describe

    for name, value in (('track', 0.5), ('wheel_radius', 0.1), ('wheel_base', -1.0),
                        ('base_link_offset', 0.2)):
        with pytest.raises(ParameterError, match=rf'encoders\.{name} = .*encoders\.model is auto'):
            from_flat(LocalizationConfig, {'odometry_source': 'joint_states',
                                           f'encoders.{name}': value})
    with pytest.raises(ValueError, match='auto'):
        EncoderOdometry(EncoderConfig())
    from wheelsim.core.localization.wheel_encoders import with_vehicle
    with pytest.raises(DescriptionError, match='no urdf'):
        with_vehicle(EncoderConfig(), describe(ideal_config('differential')))


@pytest.mark.parametrize('change', [{'wheel_radius_error': 0.02}, {'resolution': 4096}])
def test_a_live_encoder_change_loses_no_wheel_motion(change):
    """The samples after a change of ``encoders.*`` integrate with the new values from the
    wheels' last angles: no interval of motion is dropped, nothing before is re-counted."""
    encoders = dict(model='differential', track=0.6, wheel_radius=0.1)
    vehicle = Vehicle(ideal_config('differential', track=0.6, vis_tire_diameter=0.2), DT)
    loc = localization(**encoders)
    [(before, _)], start = drive(vehicle, loc, [(0.6, 0.0, 0.0)], 2.0)
    loc.update_config(replace(loc.config, encoders=replace(loc.config.encoders, **change)))
    [(after, truth)], _ = drive(vehicle, loc, [(0.6, 0.0, 0.0)], 2.0)
    scale = 1.0 + change.get('wheel_radius_error', 0.0)
    tick_m = 2 * math.pi / change['resolution'] * 0.1 if 'resolution' in change else 0.0
    travelled_after = truth[0] - start[0] - before[0]
    assert after[0] - before[0] == pytest.approx(scale * travelled_after, abs=tick_m + 1e-9)


def test_another_vehicle_of_the_same_model_starts_its_wheels_afresh_at_the_same_pose():
    """Found in review of the change above: a new vehicle_description (encoders.model auto) of
    the same model but other joints (a forklift's one steering joint after a car's two) kept
    the old joint names: every joint_states was refused and the odometry froze; with the same
    joint names, the old vehicle's last angles would have counted as motion."""
    from wheelsim.core.localization.wheel_encoders import EncoderConfig, with_vehicle
    from wheelsim.core.vehicle.description import describe
    from wheelsim.core.vehicle.urdf import build_urdf

    def encoders_of(config):
        return with_vehicle(EncoderConfig(), describe(config, build_urdf(config)))

    car = ideal_config('bicycle', wheel_base=2.7, vis_track_fixed=1.5, vis_track_steered=1.5,
                       **{'steering_actuator.max_position': 0.6})
    lift = ideal_config('bicycle', wheel_base=2.0, vis_track_fixed=1.1, vis_track_steered=0.0,
                        **{'steering_actuator.max_position': 0.6})
    loc = localization(**{name: getattr(encoders_of(car), name)
                          for name in ('model', 'wheel_base', 'wheel_radius')})
    [(before, _)], _ = drive(Vehicle(car, DT), loc, [(1.0, 0.0, 0.2)], 1.0)
    loc.update_config(replace(loc.config, encoders=encoders_of(lift)), new_vehicle=True)
    forklift = Vehicle(lift, DT, (5.0, 5.0, 1.0))
    forklift.step(1000)  # at rest: its clock past the car's last sample
    [(after, truth)], start = drive(forklift, loc, [(1.0, 0.0, 0.2)], 1.0)
    # the first sample of the new wheels is their start: the odometry goes on from `before`
    moved = compose_floats(inverse_floats(before), after)
    assert math.hypot(moved[0], moved[1]) == pytest.approx(
        math.hypot(truth[0] - start[0], truth[1] - start[1]), abs=1e-9)
