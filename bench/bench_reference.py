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
import math

from wheelsim.testing.commonroad import commonroad_comparison, commonroad_vehicle

#: name, (start speed, [(until t, speed command, curvature)], end t), braking limit [m/s^2].
SINE = [(t / 20.0 + 0.05, 20.0 if t < 100 else 8.0, 0.25 * math.sin(2 * math.pi * t / 80.0) / 12.0)
        for t in range(240)]
MANOEUVRES = [
    ('sine steering 12 -> 20 -> 8 m/s, no load transfer', (12.0, SINE, 12.0), 3.0, False),
    ('braking 8 m/s^2 from 20 m/s on 250 m, cg 0.61 m',
     (20.0, [(1.0, 20.0, 1 / 250), (5.0, 5.0, 1 / 250)], 5.0), 8.0, True),
    ('braking 5 m/s^2 from 20 m/s on 100 m, cg 0.61 m',
     (20.0, [(1.0, 20.0, 1 / 100), (5.0, 5.0, 1 / 100)], 5.0), 5.0, True),
    ('speeding up 3 m/s^2 from 10 m/s on 100 m, cg 0.61 m',
     (10.0, [(1.0, 10.0, 1 / 100), (5.0, 20.0, 1 / 100)], 5.0), 3.0, True),
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
