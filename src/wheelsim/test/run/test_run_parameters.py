"""The parameters the runner gives each node: the scenario's, plus what a lock-step run needs."""

from wheelsim.run.runner import _parameters, node_parameter_specs
from wheelsim.run.scenario import Scenario


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
