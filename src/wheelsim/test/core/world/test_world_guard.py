"""Stepping a vehicle through the world: it stops at obstacles at any speed and step rate,
never passes one, drives on when commanded away, and is not slowed where nothing is near."""

import math

import numpy as np
import pytest

from wheelsim.core.params import flatten
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import Vehicle
from wheelsim.core.world.collision import clearances
from wheelsim.core.world.footprint import Footprint
from wheelsim.core.world.guard import CollisionGuard
from wheelsim.core.world.occupancy import OccupancyMap

RES = 0.05
BOX = Footprint.from_flat([-0.3, -0.2, 0.3, -0.2, 0.3, 0.2, -0.3, 0.2])


def thin_wall_world(wall_x_m=2.0):
    """A 20 m x 20 m map (x, y in [-10, 10)) with one wall one cell thick at x = wall_x_m."""
    values = np.zeros((400, 400), np.int8)
    values[:, round((wall_x_m + 10.0) / RES)] = 100
    return OccupancyMap.from_values(values, 400, 400, RES, (-10.0, -10.0, 0.0))


def vehicle(model='differential', step_rate=1000.0, pose=(0.0, 0.0, 0.0), **flat):
    values = {'model': model, **flatten(flat)}
    if model == 'differential':  # instant actuators, no speed limit: commands taken at once
        values.update({f'model_params.differential.drive_actuators.{key}': 0.0
                       for key in ('dead_time', 'time_constant', 'max_acceleration')})
        values['model_params.differential.drive_actuators.max_velocity'] = 1000.0
    return Vehicle(vehicle_config_from_params(values), 1.0 / step_rate, pose)


@pytest.mark.parametrize('speed_mps, step_rate', [
    (0.5, 1000.0),   # 0.5 mm per step
    (20.0, 1000.0),  # 2 cm per step: 0.4 cell
    (10.0, 20.0),    # 0.5 m per step: 10 cells, twenty times the wall's thickness
    (80.0, 10.0),    # 8 m per step: jumps from before to far beyond the wall
])
def test_stops_at_the_wall_at_any_speed_and_step_rate(speed_mps, step_rate):
    world = thin_wall_world()
    car = vehicle(step_rate=step_rate)
    guard = CollisionGuard(world, BOX)
    car.set_command(speed_mps, 0.0, 0.0)
    seconds = 3.0 / speed_mps + 0.5
    guard.step(car, int(seconds * step_rate))
    x, y, yaw = car.pose
    # The front edge x + 0.3 stops at the wall's face x = 2.0, within 1/64 of a cell.
    assert 2.0 - RES / 64 - 1e-9 <= x + 0.3 <= 2.0
    assert guard.collisions == 1 and guard.touching
    assert guard.last_contact.col == 240
    assert clearances(world, BOX, [car.pose])[0] >= 0.0
    assert car.state().vx_mps == 0.0  # stopped in the step it touched


def test_never_passes_a_wall_when_stepped_in_one_long_batch():
    world = thin_wall_world()
    car = vehicle(step_rate=1000.0)
    guard = CollisionGuard(world, BOX)
    car.set_command(5.0, 0.0, 0.0)
    guard.step(car, 10_000)  # 10 s in one call: 50 m of commanded travel
    assert car.pose[0] + 0.3 <= 2.0
    assert guard.collisions == 1


def test_pushing_stays_stopped_and_backing_off_releases_then_a_new_contact_counts():
    world = thin_wall_world()
    car = vehicle()
    guard = CollisionGuard(world, BOX)
    car.set_command(1.0, 0.0, 0.0)
    for _ in range(200):  # 4 s at 50 batches per second
        assert guard.step(car, 20) is None or guard.collisions == 1
    pinned_x = car.pose[0]
    assert pinned_x + 0.3 == pytest.approx(2.0, abs=RES / 64)
    assert guard.collisions == 1
    car.set_command(-0.5, 0.0, 0.0)
    guard.step(car, 500)
    assert not guard.touching and car.pose[0] == pytest.approx(pinned_x - 0.25, abs=1e-3)
    car.set_command(1.0, 0.0, 0.0)
    new = guard.step(car, 1000)
    assert new is not None and guard.collisions == 2


def test_the_last_contact_stays_the_collision_s_first_while_touching_elsewhere():
    """Found in review: /diagnostics' 'last collision at' moved to the cells touched later in
    the same collision, away from the point /collision and the log had reported."""
    world = thin_wall_world()
    car = vehicle(pose=(1.0, 0.05, 0.1))
    guard = CollisionGuard(world, BOX)
    reported = []
    for k in range(150):  # 3 s at 50 batches per second: to the wall, then turning against it
        car.set_command(*((0.5, 0.0, 0.0) if k < 100 else (0.0, 0.0, -0.5)))
        new = guard.step(car, 20)
        reported += [new] if new is not None else []
    assert guard.collisions == 1 and guard.touching and len(reported) == 1
    assert guard.last_contact == reported[0]


def test_a_turning_vehicle_stops_with_its_corner_at_the_wall():
    world = thin_wall_world()
    car = vehicle(pose=(1.67, 0.0, 0.0))  # front edge 3 cm from the wall
    guard = CollisionGuard(world, BOX)
    car.set_command(0.0, 0.0, 2.0)  # turning on the spot: the corners reach 0.36 m ahead
    guard.step(car, 2000)
    assert guard.collisions == 1
    clear = clearances(world, BOX, [car.pose])[0]
    assert 0.0 <= clear <= RES / 64 + 1e-9
    # the corner (0.3, -0.2), 0.361 m out at -0.588 rad, reaches the wall 0.33 m ahead after
    # turning by 0.588 - acos(0.33 / 0.361) = 0.17 rad: it stopped there
    assert car.pose[2] == pytest.approx(0.588 - math.acos(0.33 / math.hypot(0.3, 0.2)), abs=0.01)


@pytest.mark.parametrize('model, params', [
    ('bicycle', {'model_params': {'bicycle': {'steering_actuator': {'max_position': 0.5}}}}),
    ('omni', {}),
])
def test_other_models_stop_too(model, params):
    world = thin_wall_world()
    car = vehicle(model, **params)
    guard = CollisionGuard(world, BOX)
    car.set_command(3.0, 0.0, 0.3)
    guard.step(car, 5000)
    assert guard.collisions >= 1
    assert clearances(world, BOX, [car.pose])[0] >= 0.0
    assert car.pose[0] < 2.0


def test_far_from_obstacles_the_steps_are_those_of_the_bare_vehicle():
    world = thin_wall_world(wall_x_m=9.0)
    guarded, bare = vehicle(), vehicle()
    guard = CollisionGuard(world, BOX)
    for vehicle_ in (guarded, bare):
        vehicle_.set_command(0.8, 0.0, 0.5)
    for _ in range(100):
        guard.step(guarded, 20)
        bare.step(20)
    np.testing.assert_array_equal(guarded.snapshot().state, bare.snapshot().state)
    assert guard.collisions == 0


def test_a_vehicle_inside_an_obstacle_is_not_held():
    world = thin_wall_world()
    car = vehicle(pose=(2.0, 0.0, 0.0))
    guard = CollisionGuard(world, BOX)
    car.set_command(1.0, 0.0, 0.0)
    guard.step(car, 100)
    assert guard.stuck and car.pose[0] == pytest.approx(2.1)
    guard.step(car, 1000)
    assert car.pose[0] == pytest.approx(3.1)
    guard.step(car, 1)
    assert not guard.stuck and guard.collisions == 0


@pytest.mark.parametrize('batch_steps', [1000, 250, 20])
def test_a_path_that_comes_back_within_a_batch_still_stops_at_the_wall(batch_steps):
    """A circle of 1 m radius a second reaching x = 1.36 m with its corners: after 1 s the
    vehicle is back where it started, so the arc between a batch's end poses is short, though
    its path crossed the wall at x = 1.2."""
    world = thin_wall_world(wall_x_m=1.2)
    car = vehicle(step_rate=1000.0)
    guard = CollisionGuard(world, BOX)
    car.set_command(2 * math.pi, 0.0, -2 * math.pi)  # clockwise: at x = 1 at t = 0.25 s
    for _ in range(2400 // batch_steps):
        guard.step(car, batch_steps)
    assert guard.collisions == 1
    assert clearances(world, BOX, [car.pose])[0] >= 0.0

