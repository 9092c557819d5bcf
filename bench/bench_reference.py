"""The dynamic bicycle against CommonRoad's single-track model, per manoeuvre.

Run after ``source env.sh``:  python bench/bench_reference.py

CommonRoad's vehicle 2 (a BMW 320i, ``commonroad-vehicle-models`` 3.0.2) in both, the same
inputs, both at 1 kHz (:mod:`wheelsim.testing.commonroad`): a sine steering while speeding up
and braking without load transfer, then braking and speeding up in turns with its centre of mass
0.61 m high (``dynamics.cg_height``). Printed per manoeuvre: the largest differences of
position, yaw, yaw rate and slip angle, CommonRoad's largest yaw rate, and for the load-transfer
cases the largest yaw-rate difference of wheelsim's car without the height (what the height
changes). The tests hold the same comparisons (test_vehicle_single_track.py).
"""

from __future__ import annotations

import argparse

from wheelsim.testing.commonroad import (
    LOAD_TRANSFER,
    SINE_STEERING,
    commonroad_comparison,
    commonroad_vehicle,
)

#: name, manoeuvre, braking limit [m/s^2], centre of mass at its height.
MANOEUVRES = [
    ('sine steering 12 -> 20 -> 8 m/s, no load transfer', SINE_STEERING, 3.0, False),
    *((f'{"braking" if c.end_mps < c.start_mps else "speeding up"} {c.rate_mps2:g} m/s^2 from '
       f'{c.start_mps:g} m/s on {c.radius_m:g} m, cg 0.61 m', c.manoeuvre, c.rate_mps2, True)
      for c in LOAD_TRANSFER),
]


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print('| manoeuvre | position [m] | yaw [rad] | yaw rate [rad/s] | slip angle [rad] | '
          'CommonRoad yaw rate max [rad/s] | without the height: yaw rate [rad/s] |')
    print('|---|---|---|---|---|---|---|')
    for name, manoeuvre, braking, height in MANOEUVRES:
        car = commonroad_vehicle(height)
        worst, turning = commonroad_comparison(car, manoeuvre, braking)
        flat = '-'
        if height:
            flat_worst, _ = commonroad_comparison(commonroad_vehicle(), manoeuvre, braking,
                                                  reference=car)
            flat = f'{flat_worst[2]:.2g}'
        print(f'| {name} | {worst[0]:.2g} | {worst[1]:.2g} | {worst[2]:.2g} | {worst[3]:.2g} | '
              f'{turning[0]:.3g} | {flat} |', flush=True)


if __name__ == '__main__':
    main()
