"""Record a bag that `wheelsim calibrate` can fit, from vehicle_sim itself: the vehicle driven
through held command steps that identify each actuator parameter, every topic recorded,
headless and in lock-step (no DDS). A normal run's bag does not calibrate: its path tracking
never steps the commands.

    python examples/excitation_bag.py my_bag --model differential \
        --param model_params.differential.drive_actuators.dead_time=0.08
    wheelsim calibrate my_bag -o calibration/params.yaml

The fitted parameters come back close to the ones given (the steps are
wheelsim.core.calibration.excitation's, at the vehicle's top speed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wheelsim.core import yaml_numbers
from wheelsim.core.calibration.excitation import excitation
from wheelsim.core.params import ParameterError, unknown_keys
from wheelsim.core.vehicle.config import MODELS
from wheelsim.core.vehicle.description import describe, top_speed_mps
from wheelsim.nodes.vehicle_sim import parameter_specs
from wheelsim.run.calibration import record_excitation_bag
from wheelsim.sim import load_vehicle


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description='Record a bag of vehicle_sim driven through command steps, for '
                    '`wheelsim calibrate`.')
    parser.add_argument('bag', type=Path, help='the rosbag2 folder to write (must not exist)')
    parser.add_argument('--model', default='differential', choices=MODELS,
                        help='vehicle model (default differential)')
    parser.add_argument('--param', action='append', default=[], metavar='NAME=VALUE',
                        help='a vehicle_sim parameter by its dotted name, as ROS reads the '
                             'value (repeat for more)')
    args = parser.parse_args(argv)
    if args.bag.exists():
        parser.error(f'{args.bag} exists: give a new folder')
    parameters = {'model': args.model}
    known = [spec.name for spec in parameter_specs()]
    for item in args.param:
        name, equals, value = item.partition('=')
        if not equals or not name:
            parser.error(f'--param {item}: expected NAME=VALUE')
        for _, close in unknown_keys(known, [name]):
            parser.error(f'--param {item}: vehicle_sim has no parameter {name}'
                         + (f' (did you mean {close}?)' if close else ''))
        parameters[name] = yaml_numbers.ros_value(value)
    try:  # every parameter as vehicle_sim checks it, before the bag folder is made
        vehicle = load_vehicle(None, parameters)
    except ValueError as err:
        parser.error(str(err))
    top_speed = top_speed_mps(describe(vehicle.config))
    try:  # what the recording sets itself, and vehicle_sim's rules across its parameters
        record_excitation_bag(args.bag, parameters, excitation(args.model, top_speed))
    except ParameterError as err:  # raised before the bag folder is made
        parser.error(str(err))
    print(f'{args.bag}: now `wheelsim calibrate {args.bag} -o calibration/params.yaml`')
    return 0


if __name__ == '__main__':
    sys.exit(main())
