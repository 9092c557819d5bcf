"""The dynamic single-track bicycle: against the CommonRoad single-track model (the field's
reference implementation, ``commonroad-vehicle-models`` 3.0.2, installed for the tests), the
steady-state cornering radius with its understeer gradient, the lateral friction limit, the
blend to the kinematic bicycle at low speed, and the exact integration at any step rate."""

import math

import numpy as np
import pytest
from scipy import linalg as scipy_linalg

from wheelsim.core.vehicle import stepping as st
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import Vehicle
from wheelsim.core.vehicle.single_track import GRAVITY_MPS2, linear2_step, single_track_step
from wheelsim.testing.commonroad import (
    LOAD_TRANSFER,
    SINE_STEERING,
    commonroad_comparison,
    commonroad_vehicle,
    row,
    single_track,
)


def test_trajectories_equal_the_commonroad_single_track_model():
    """Vehicle 2 without load transfer, 12 s of sine steering while speeding up from 12 to
    20 m/s and braking to 8 m/s, at 1 kHz."""
    worst, turning = commonroad_comparison(commonroad_vehicle(), SINE_STEERING)
    # wheelsim holds the end-of-step twist over each step (exact arc): the pose runs dt/2
    # ahead (up to v dt / 2 = 1 cm at 20 m/s, yaw rate x dt / 2 in heading); the lateral
    # states agree to second order in dt.
    assert worst[0] < 0.01, f'position {worst[0]:.3g} m'  # measured 4.6 mm
    assert worst[1] < 3e-4, f'yaw {worst[1]:.3g} rad'  # 2.0e-4 = max yaw rate x dt / 2
    assert worst[2] < 2e-6, f'yaw rate {worst[2]:.3g} rad/s'  # 6.2e-7
    assert worst[3] < 5e-7, f'slip angle {worst[3]:.3g} rad'
    assert worst[4] < 1e-12
    assert turning[0] > 0.2 and turning[1] > 0.005  # a real manoeuvre: turned and slipped


@pytest.mark.parametrize('change', LOAD_TRANSFER, ids=[c.name for c in LOAD_TRANSFER])
def test_load_transfer_equals_commonroad_with_its_centre_of_mass_height(change):
    """Vehicle 2 with its centre of mass 0.61 m high, in CommonRoad and in wheelsim
    (dynamics.cg_height): within the step error as without load transfer, while the same car
    without it (cg_height 0) turns visibly differently."""
    p = commonroad_vehicle(height=True)
    worst, turning = commonroad_comparison(p, change.manoeuvre, change.rate_mps2)
    assert worst[0] < 0.01 and worst[1] < 3e-4, worst
    assert worst[2] < 2e-6 and worst[3] < 5e-7 and worst[4] < 1e-11, worst
    flat = commonroad_vehicle()  # wheelsim without the height, CommonRoad with it:
    flat_worst, _ = commonroad_comparison(flat, change.manoeuvre, change.rate_mps2, reference=p)
    assert flat_worst[2] > 100 * worst[2] and flat_worst[2] > 0.005 * turning[0], flat_worst


# --- analytic -------------------------------------------------------------------------------


def test_reversing_in_a_gentle_turn_follows_the_kinematic_bicycle():
    """Issue 36's case: -2 m/s on a 100 m radius. Before the tyre forces took the sign of the
    speed, the yaw rate was +3.0 rad/s after 1 s and +11.2 rad/s from 2 s on (a spin)."""
    states = []
    for dynamic in (True, False):
        vehicle = single_track(dynamics__enabled=dynamic)
        vehicle.set_command(-2.0, 0.0, -0.02)
        vehicle.step(4000)
        states.append(vehicle.state())
    assert states[0].wz_radps == pytest.approx(states[1].wz_radps, rel=1e-3)
    assert states[1].wz_radps == pytest.approx(-0.02, rel=1e-3)
    assert abs(states[0].vy_mps) < 1e-3


def lane_change(dynamic, speed, dt=1e-3):
    """(x, y, yaw) every 10 ms of a lane change at ``speed`` after 5 s at that speed: the yaw
    rate command is one period of 0.1 sin(2 pi t / 10 s) (lateral acceleration up to
    0.1 |speed| m/s^2), so the heading comes back to where it started."""
    vehicle = single_track(dt=dt, dynamics__enabled=dynamic)
    vehicle.set_command(speed, 0.0, 0.0)
    vehicle.step(round(5.0 / dt))
    start = vehicle.state()
    poses = []
    for k in range(1000):
        vehicle.set_command(speed, 0.0, 0.1 * math.sin(2.0 * math.pi * k * 0.01 / 10.0))
        vehicle.step(round(0.01 / dt))
        state = vehicle.state()
        poses.append((state.x_m - start.x_m, state.y_m - start.y_m, state.yaw_rad))
    return np.array(poses)


def test_a_reverse_lane_change_stays_with_the_kinematic_bicycle_as_a_forward_one_does():
    """At 0.3 m/s^2 the tyres barely slip: backwards as forwards, the dynamic car ends within
    4 cm and 0.002 rad of the kinematic bicycle over the 30 m (the two directions alike to
    2 %), and its path converges with the step."""
    deviations = {}
    for speed in (3.0, -3.0):
        dynamic, kinematic = lane_change(True, speed), lane_change(False, speed)
        assert abs(kinematic[-1, 1]) > 4.5 and abs(kinematic[-1, 0]) > 29.0  # moved over
        deviations[speed] = np.max(np.hypot(*(dynamic[:, :2] - kinematic[:, :2]).T))
        assert np.max(np.abs(dynamic[:, 2] - kinematic[:, 2])) < 2e-3
    assert deviations[-3.0] < 0.04
    assert deviations[-3.0] == pytest.approx(deviations[3.0], rel=0.02)
    fine = lane_change(True, -3.0, dt=1e-4)
    errors = [np.max(np.abs(lane_change(True, -3.0, dt=dt)[:, :2] - fine[:, :2]))
              for dt in (1e-2, 1e-3)]
    assert errors[0] < 5e-3 and errors[1] < errors[0] / 5.0, errors


@pytest.mark.parametrize(('stiffness_steered', 'stiffness_fixed'), [(15.0, 25.0), (20.0, 20.0),
                                                                    (25.0, 18.0)])
@pytest.mark.parametrize('speed', [5.0, 15.0, -3.0, -8.0])
def test_steady_state_cornering_radius_follows_the_understeer_gradient(
    stiffness_steered, stiffness_fixed, speed
):
    """r = v delta / (L + K v |v|): the steady state of the linear model (forces balance the
    centripetal v r, moments about G cancel), derived in single_track.py; reversing, an
    understeering car oversteers (a tighter circle than the kinematic bicycle)."""
    base, cg, mu = 2.6, 1.2, 0.9
    vehicle = single_track(
        wheel_base=base, friction_coefficient=mu, dynamics__cg_to_fixed_axle=cg,
        dynamics__cornering_stiffness_steered=stiffness_steered,
        dynamics__cornering_stiffness_fixed=stiffness_fixed,
    )
    vehicle.set_command(speed, 0.0, 0.04 * speed / base)  # a gentle turn: linear tyres
    vehicle.step(20000)
    r = row(vehicle)
    delta, v = r[st.S_STEER], r[st.S_SPEED_CG]
    gradient = (1 / stiffness_steered - 1 / stiffness_fixed) / (mu * GRAVITY_MPS2)
    state = vehicle.state()
    assert v == pytest.approx(speed * math.hypot(1.0, 1.2 * math.tan(delta) / base), rel=1e-6)
    assert v / state.wz_radps == pytest.approx((base + gradient * v * abs(v)) / delta,
                                               rel=1e-9)
    kinematic_radius = v / (v * math.cos(r[st.S_SLIP_CG]) * math.tan(delta) / base)
    if gradient > 0:  # understeer: a wider circle than the kinematic bicycle drives forwards
        assert (v / state.wz_radps > kinematic_radius) == (speed > 0)


def accelerations(vehicle, phases, dt=1e-3):
    """Speeds of G and the size of its acceleration, (dv/dt, v (d beta/dt + r)), after each
    step of ``phases`` ((command, steps) pairs)."""
    speeds, sizes = [], []
    before = row(vehicle).copy()
    for command, steps in phases:
        vehicle.set_command(*command)
        for _ in range(steps):
            vehicle.step(1)
            after = row(vehicle).copy()
            along = (after[st.S_SPEED_CG] - before[st.S_SPEED_CG]) / dt
            turn = math.remainder(after[st.S_SLIP_CG] - before[st.S_SLIP_CG], math.tau) / dt
            sizes.append(math.hypot(along, after[st.S_SPEED_CG] * (turn + after[st.S_WZ])))
            speeds.append(after[st.S_SPEED_CG])
            before = after
    return np.array(speeds), np.array(sizes)


@pytest.mark.parametrize('cg_height_m', [0.0, 1.0, 2.0, 3.0])
def test_an_axle_lifting_off_leaves_the_weight_on_the_other(cg_height_m):
    """Found in review: braking hard with a high centre of mass, the axle ahead was clamped at
    no load while the one behind kept its share plus the transfer, and the tyres of a sliding
    car pushed G sideways with up to 2 mu g. Both axles sliding, their forces add to mu g."""
    _, _, lateral = single_track_step(10.0, 0.5, -0.3, 0.0, 1e-3, 2.0, 1.0, 20.0, 20.0, 1.0,
                                      1.0, 1.0, -GRAVITY_MPS2 * cg_height_m)
    assert abs(lateral) <= GRAVITY_MPS2 * (1 + 1e-12)


def test_acceleration_never_exceeds_mu_g_and_the_car_slides():
    """12 m/s on mu 0.4, then the steering the command asks for (0.41 rad): the steered axle
    slides; the acceleration of G stays within mu g, the car ploughs on a circle far wider
    than the kinematic one, and across the velocity its acceleration is the sliding axle's
    mu g / 2 (the centre of mass midway) across its wheels, turned by the steering, plus the
    gripping axle's force of its slip angle."""
    mu = 0.4
    vehicle = single_track(friction_coefficient=mu)
    vehicle.set_command(12.0, 0.0, 0.0)
    vehicle.step(15000)
    _, sizes = accelerations(vehicle, [((12.0, 0.0, 2.0), 3000)])
    assert sizes.max() <= 1.001 * mu * GRAVITY_MPS2  # measured 0.956 mu g
    r = row(vehicle)
    steer, slip_end = r[st.S_STEER], r[st.S_SLIP_CG]
    radius_m = r[st.S_SPEED_CG] / r[st.S_WZ]
    assert radius_m > 5.0 * 2.6 / math.tan(steer)  # measured 42 m against 6.0 m
    sliding = mu * GRAVITY_MPS2 / 2
    gripping = mu * 20.0 * GRAVITY_MPS2 / 2 * (-slip_end + 1.3 * r[st.S_WZ] / r[st.S_SPEED_CG])
    assert 0.0 < gripping < sliding  # the fixed axle in its linear range
    across = sliding * math.cos(steer - slip_end) + gripping
    assert sizes[-1] == pytest.approx(across, rel=1e-3)  # the speed held: no share along
    for _ in range(20):  # it spins on: the slip angle stays an angle
        vehicle.step(1000)
        assert -math.pi < row(vehicle)[st.S_SLIP_CG] <= math.pi


@pytest.mark.parametrize(('speed', 'steered_behind'), [(12.0, False), (-12.0, False),
                                                       (12.0, True)],
                         ids=['forwards', 'reversing', 'steered-axle-behind'])
def test_a_sliding_car_brakes_and_stops(speed, steered_behind):
    """12 m/s on mu 0.4, 0.41 rad of steering (the car slides), then a stop with the steering
    held: the sliding tyres' forces against G's velocity brake it, the drive takes the friction
    they leave; the speed never grows, the acceleration stays within mu g. Before the tyres
    braked, the speed stayed at 12.3 m/s for ever (yaw rate 0.38 rad/s) and the turn-in
    reached 1.12 mu g, the drive's share taken from v r."""
    mu = 0.4
    vehicle = single_track(friction_coefficient=mu, reverse=steered_behind,
                           drive_actuator__max_acceleration=0.0,
                           drive_actuator__time_constant=0.0, drive_actuator__dead_time=0.0)
    vehicle.set_command(speed, 0.0, 0.0)
    vehicle.step(15000)
    turn = math.copysign(2.0, speed)
    speeds, sizes = accelerations(vehicle, [((speed, 0.0, turn), 2000), ((0.0, 0.0, 0.0), 10000)])
    magnitudes = np.abs(speeds)
    assert sizes[magnitudes > 1.0].max() <= 1.02 * mu * GRAVITY_MPS2  # measured 1.017, 1.001
    assert magnitudes[1999] > 10.0 and magnitudes[2999] < magnitudes[1999] - 1.0
    assert (np.diff(magnitudes[2000:]) <= 1e-12).all()  # braking only
    assert (np.sign(speeds[2000:][magnitudes[2000:] > 0]) == math.copysign(1.0, speed)).all()
    stopped = np.flatnonzero(magnitudes < 1e-9)
    assert stopped.size and stopped[0] < 2000 + 8000, 'never stopped'  # measured 5.8, 3.0 s
    assert abs(vehicle.state().wz_radps) < 1e-9 and magnitudes[-1] < 1e-9


@pytest.mark.parametrize('mu', [0.1, 0.4])
def test_a_slide_into_a_wide_blend_zone_stops(mu):
    """Full lock (1 rad) at 8 m/s with the blend from 2 to 6 m/s, then a stop: in review the car
    circled for ever at 5.4 m/s (mu 0.4: the kinematic share's v r took the drive's friction)
    or at 2.000 m/s (mu 0.1, blend_speed_low: the kinematic turn held it)."""
    vehicle = single_track(friction_coefficient=mu, dynamics__blend_speed_low=2.0,
                           dynamics__blend_speed_high=6.0, drive_actuator__max_acceleration=0.0,
                           drive_actuator__time_constant=0.0, drive_actuator__dead_time=0.0)
    vehicle.set_command(8.0, 0.0, 0.0)
    vehicle.step(10000)
    speeds, _ = accelerations(vehicle, [((8.0, 0.0, 8.0 * math.tan(1.0) / 2.6), 2000),
                                        ((0.0, 0.0, 0.0), 20000)])
    assert (np.diff(np.abs(speeds[2000:])) <= 1e-12).all()
    stopped = np.flatnonzero(np.abs(speeds) < 1e-9)
    assert stopped.size, f'never stopped: {speeds[-1]:.3f} m/s'  # measured 12.2 and 3.4 s


def test_blends_to_the_kinematic_bicycle_and_is_well_behaved_at_zero_speed():
    base = 2.6
    dynamic = single_track(wheel_base=base)
    kinematic = Vehicle(vehicle_config_from_params({
        'model': 'bicycle', 'model_params.bicycle.wheel_base': base,
        'model_params.bicycle.vis_track_steered': 0.0,
        'model_params.bicycle.steering_actuator.max_position': 1.0,
        'model_params.bicycle.drive_actuator.max_velocity': 40.0}), 1e-3)
    states = []
    for vehicle in (dynamic, kinematic):
        vehicle.set_command(0.3, 0.0, 0.2)  # below blend_speed_low: kinematic
        vehicle.step(8000)
        states.append(vehicle.state())
    # The single-track drive sets G's speed so that R goes at vx, as the kinematic bicycle.
    assert states[0].vx_mps == pytest.approx(states[1].vx_mps, rel=1e-9)
    assert states[0].wz_radps == pytest.approx(states[1].wz_radps, rel=1e-9)
    assert states[0].vy_mps == pytest.approx(0.0, abs=1e-12)
    # From rest through the blend up to 3 m/s and back to a stop while steering: smooth.
    vehicle = single_track(dt=1e-2)  # 100 Hz: stiff tyres at low speed, exact integration
    yaw_rates, speeds = [], []
    for command, steps in (((3.0, 0.0, 0.5), 800), ((0.0, 0.0, 0.5), 800)):
        vehicle.set_command(*command)
        for _ in range(steps):
            vehicle.step(1)
            yaw_rates.append(vehicle.state().wz_radps)
            speeds.append(row(vehicle)[st.S_SPEED_CG])
    assert np.all(np.isfinite(yaw_rates))
    assert max(speeds) > 2.0 and speeds[-1] < 1e-6 and abs(yaw_rates[-1]) < 1e-6
    assert np.max(np.abs(np.diff(yaw_rates))) < 0.05  # no jump where the blend starts


def steady_turn(dt, speed, steering_rad=0.5):
    """(slip angle, yaw rate) after 30 s at ``speed`` [m/s] (of the fixed axle) and
    ``steering_rad``."""
    vehicle = single_track(dt=dt, dynamics__cornering_stiffness_steered=15.0)
    vehicle.set_command(speed, 0.0, speed * math.tan(steering_rad) / 2.6)
    vehicle.step(round(30.0 / dt))
    assert row(vehicle)[st.S_STEER] == pytest.approx(steering_rad, abs=1e-9)
    return row(vehicle)[st.S_SLIP_CG], vehicle.state().wz_radps


@pytest.mark.parametrize('dt', [1e-2, 1e-4])
@pytest.mark.parametrize(('speed', 'steering_rad'), [(0.3, 0.5), (0.75, 0.5), (-0.75, 0.5),
                                                     (10.0, 0.05)],
                         ids=['kinematic', 'blend', 'blend-reversing', 'dynamic'])
def test_steady_state_is_the_same_at_any_step_rate(dt, speed, steering_rad):
    """In and out of the blend zone (0.5-1 m/s), the tyres in their linear range. Blending the
    states after each step, the slip angle at 0.75 m/s was 0.2843 at 100 Hz, 0.2892 at 1 kHz
    and 0.2922 at 10 kHz."""
    slip, yaw_rate = steady_turn(dt, speed, steering_rad)
    reference_slip, reference_yaw_rate = steady_turn(1e-3, speed, steering_rad)
    assert slip == pytest.approx(reference_slip, abs=1e-9)
    assert yaw_rate == pytest.approx(reference_yaw_rate, abs=1e-9)


def test_linear_step_is_the_matrix_exponential():
    rng = np.random.default_rng(2)
    for scale in (0.1, 10.0, 1e4):
        for _ in range(20):
            a = rng.normal(size=(2, 2)) * scale
            a[np.diag_indices(2)] = -np.abs(a[np.diag_indices(2)])  # mostly stable
            b = rng.normal(size=2)
            x = rng.normal(size=2)
            dt = 1e-3
            augmented = np.zeros((3, 3))
            augmented[:2, :2], augmented[:2, 2] = a * dt, b * dt
            expected = scipy_linalg.expm(augmented) @ np.append(x, 1.0)
            got = linear2_step(*a.ravel(), *b, *x, dt)
            np.testing.assert_allclose(got, expected[:2], rtol=1e-10, atol=1e-12)


def test_dynamics_needs_friction_and_fixed_axle_drive():
    base = {'model': 'bicycle', 'model_params.bicycle.dynamics.enabled': True}
    with pytest.raises(ValueError, match='friction_coefficient'):
        vehicle_config_from_params(base)
    with pytest.raises(ValueError, match='drive_on_steered_wheel'):
        vehicle_config_from_params({**base, 'model_params.bicycle.friction_coefficient': 1.0,
                                    'model_params.bicycle.drive_on_steered_wheel': True,
                                    'model_params.bicycle.steering_actuator.max_position': 1.0})
    with pytest.raises(ValueError, match='cg_to_fixed_axle'):
        vehicle_config_from_params({**base, 'model_params.bicycle.friction_coefficient': 1.0,
                                    'model_params.bicycle.dynamics.cg_to_fixed_axle': 2.5})
    with pytest.raises(ValueError, match='blend_speed_high'):
        vehicle_config_from_params({**base, 'model_params.bicycle.friction_coefficient': 1.0,
                                    'model_params.bicycle.dynamics.blend_speed_high': 0.1})
