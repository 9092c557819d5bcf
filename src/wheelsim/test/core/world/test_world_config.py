"""The world and scan parameters inside vehicle_sim's settings: defaults and cross-checks."""

import pytest

from wheelsim.core.params import ParameterError, from_flat
from wheelsim.core.vehicle_sim.config import VehicleSimSettings


def test_defaults_follow_the_interface():
    settings = VehicleSimSettings()
    assert settings.world.map_yaml == '' and settings.world.collisions
    assert settings.scan.enabled and settings.scan.frame_id == 'base_scan'
    assert settings.scan.beam_count == 360 and settings.scan.rate == 10.0
    assert settings.footprint == () and settings.footprint_frame == ''


@pytest.mark.parametrize('values, message', [
    ({'step_rate': 5.0, 'pub_rate': 5.0, 'clock_rate': 5.0},
     'scan.rate = 10.0 is invalid: must be <= step_rate'),
    ({'scan.frame_id': 'base_link'}, 'scan.frame_id'),
    ({'scan.frame_id': ''}, 'scan.frame_id'),
    ({'footprint_frame': 'base_link'}, 'footprint_frame'),
    ({'footprint_frame': 'base_scan'}, 'footprint_frame'),
    ({'footprint_frame': '/base_footprint'}, "footprint_frame = '/base_footprint' is invalid: "
                                             "must not start with '/'"),
    ({'footprint_frame': 'base footprint'}, "footprint_frame = 'base footprint' is invalid: "
                                            'must not contain whitespace'),
    ({'scan.frame_id': '/base_scan'}, "scan.frame_id = '/base_scan' is invalid: must not start"),
    ({'footprint': [0.0, 0.0, 1.0]}, 'footprint'),
])
def test_cross_checks_name_the_parameter(values, message):
    with pytest.raises(ParameterError, match=message):
        from_flat(VehicleSimSettings, values)


def test_clock_rate_is_held_to_the_step_rate_only_with_the_reference_clock():
    """Found in the live-mode review: a wall-clock vehicle_sim at step_rate 50 was refused for
    the default clock_rate (100 Hz), which only the reference clock uses; and `wheelsim run`
    then refused clock_rate given as "has no effect in the run": no value passed both."""
    slow = {'step_rate': 50.0, 'pub_rate': 50.0, 'scan.rate': 10.0}
    assert from_flat(VehicleSimSettings, slow).clock_rate == 100.0  # unused: not checked
    with pytest.raises(ParameterError, match=r'clock_rate = 100\.0 is invalid: must be <= '
                                             r'step_rate \(50 Hz\)'):
        from_flat(VehicleSimSettings, {**slow, 'be_reference_clock': True})
    assert from_flat(VehicleSimSettings, {**slow, 'be_reference_clock': True,
                                          'clock_rate': 50.0}).clock_rate == 50.0


def test_a_footprint_frame_and_footprint_are_accepted():
    settings = from_flat(VehicleSimSettings, {'footprint_frame': 'base_footprint',
                                              'footprint': [0.3, 0.2, -0.3, 0.2, -0.3, -0.2]})
    assert settings.footprint_frame == 'base_footprint' and len(settings.footprint) == 6
