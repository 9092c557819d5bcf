"""Tank and arcade mappings of two sticks to the speeds of a vehicle's sides."""

import numpy as np
import pytest

from wheelsim.core.teleop.two_stick import arcade, side_shares, tank, wheel_shares


@pytest.mark.parametrize(('throttle', 'turn', 'left', 'right'), [
    (1.0, 0.0, 1.0, 1.0),      # full ahead
    (-1.0, 0.0, -1.0, -1.0),   # full astern
    (0.0, 1.0, -1.0, 1.0),     # spin left (counterclockwise) on the spot
    (1.0, 1.0, 0.0, 1.0),      # (0, 2) scaled back: pivot on the left wheels
    (0.5, 0.25, 0.25, 0.75),   # within range: unscaled
    (0.8, -0.6, 1.0, 0.2 / 1.4),  # (1.4, 0.2) scaled by 1.4: the ratio kept
    (3.0, 0.0, 1.0, 1.0),      # beyond the stick's range: clipped
])
def test_arcade_mixes_throttle_and_turn_and_keeps_the_ratio_in_range(throttle, turn, left,
                                                                      right):
    got = arcade(throttle, turn)
    assert (float(got[0]), float(got[1])) == pytest.approx((left, right))


def test_tank_takes_each_side_from_its_stick_clipped_and_arrays_broadcast():
    left, right = tank(np.array([0.5, -2.0, 0.0]), 0.25)
    np.testing.assert_array_equal(left, [0.5, -1.0, 0.0])
    np.testing.assert_array_equal(right, [0.25, 0.25, 0.25])
    left, right = arcade(np.linspace(-1, 1, 7), np.linspace(1, -1, 7))
    assert np.all(np.abs(left) <= 1.0) and np.all(np.abs(right) <= 1.0)


def test_every_wheel_of_a_side_turns_with_it_in_joint_order():
    np.testing.assert_array_equal(wheel_shares('differential', 0.2, -0.4), [0.2, -0.4])
    np.testing.assert_array_equal(wheel_shares('omni', 0.2, -0.4), [0.2, -0.4, 0.2, -0.4])
    np.testing.assert_array_equal(wheel_shares('omni', [0.1, 0.2], [0.3, 0.4]),
                                  [[0.1, 0.3, 0.1, 0.3], [0.2, 0.4, 0.2, 0.4]])


def test_an_unknown_mapping_or_a_car_is_refused_by_name():
    with pytest.raises(ValueError, match=r"mapping = 'joystick' must be one of \['arcade', "):
        side_shares('joystick', 0.0, 0.0)
    with pytest.raises(ValueError, match="model = 'bicycle': two-stick driving needs"):
        wheel_shares('bicycle', 0.0, 0.0)
