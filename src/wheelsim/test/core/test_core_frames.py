"""One rule for frame names in every node's configuration: non-empty and all different."""

import pytest

from wheelsim.core.localization.config import LocalizationConfig
from wheelsim.core.params import ParameterError, from_flat
from wheelsim.core.planning.config import PlannerConfig
from wheelsim.core.tracking.config import ControllerConfig
from wheelsim.core.vehicle_sim.config import VehicleSimSettings

CONFIGS = [VehicleSimSettings, LocalizationConfig, PlannerConfig, ControllerConfig]


def frame_names(config_class) -> list[str]:
    return [name for name in ('map_frame', 'odom_frame', 'base_frame')
            if name in config_class.__dataclass_fields__]


@pytest.mark.parametrize('config_class', CONFIGS, ids=lambda c: c.__name__)
def test_every_configuration_refuses_an_empty_frame_name(config_class):
    for name in frame_names(config_class):
        with pytest.raises(ParameterError, match=f'parameter {name} = .* must not be empty'):
            from_flat(config_class, {name: ''})


@pytest.mark.parametrize('config_class', [c for c in CONFIGS if len(frame_names(c)) > 1],
                         ids=lambda c: c.__name__)
def test_every_configuration_refuses_two_equal_frame_names(config_class):
    first, *others = frame_names(config_class)
    for other in others:
        with pytest.raises(ParameterError, match=f'must differ from {first}'):
            from_flat(config_class, {other: from_flat(config_class, {}).__dict__[first]})


@pytest.mark.parametrize('config_class', CONFIGS, ids=lambda c: c.__name__)
def test_prefixed_names(config_class):
    config = from_flat(config_class, {'frame_prefix': 'robot1/'})
    assert config.full_map_frame == 'robot1/map'


@pytest.mark.parametrize('config_class', CONFIGS, ids=lambda c: c.__name__)
@pytest.mark.parametrize('value, reason', [('a b/', 'whitespace'), ('/robot1/', "start with '/'"),
                                           ('r\t1/', 'whitespace')])
def test_every_configuration_refuses_a_malformed_prefix_or_frame(config_class, value, reason):
    with pytest.raises(ParameterError, match=f'parameter frame_prefix = .* {reason}'):
        from_flat(config_class, {'frame_prefix': value})
    for name in frame_names(config_class):
        with pytest.raises(ParameterError, match=f'parameter {name} = .* {reason}'):
            from_flat(config_class, {name: value.rstrip('/') or value})
