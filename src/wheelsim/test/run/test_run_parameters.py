"""The parameters the runner gives each node: the scenario's, plus what a lock-step run needs."""

from wheelsim.run.runner import _parameters, node_parameter_specs
from wheelsim.run.scenario import NODE_NAMES, Scenario


def _scenario(seed: int) -> Scenario:
    return Scenario(name='s', duration_s=1.0, seed=seed, record_topics=None, pass_criteria={},
                    node_parameters={'vehicle_sim': {'model': 'differential'}, 'localization': {},
                                     'planner': {}, 'controller': {}})


def test_the_scenario_seed_seeds_vehicle_sim_and_localization():
    for node in ('vehicle_sim', 'localization'):
        values = _parameters(_scenario(42), node)
        assert values['seed'] == 42, node
        assert values['use_sim_time'] is True
    declared = {spec.name for spec in node_parameter_specs()['vehicle_sim']}
    assert 'seed' in declared


def test_the_scenario_map_is_vehicle_sims_map_yaml(tmp_path):
    """vehicle_sim reads the scenario's map and publishes it on map (the bag records it)."""
    scenario = Scenario(name='s', duration_s=1.0, seed=0, record_topics=None, pass_criteria={},
                        node_parameters={node: {} for node in NODE_NAMES},
                        map_yaml=tmp_path / 'room.yaml')
    assert _parameters(scenario, 'vehicle_sim')['world.map_yaml'] == str(tmp_path / 'room.yaml')
    assert 'world.map_yaml' not in _parameters(_scenario(0), 'vehicle_sim')
    assert all('world.map_yaml' not in _parameters(scenario, node)
               for node in NODE_NAMES if node != 'vehicle_sim')
