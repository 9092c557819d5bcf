"""The controller's kernel warm-up: after it, no control step loads a kernel (every law and
model, relocation and a lagging vehicle included): through numba's JIT, none compiles or loads;
with the kernels compiled ahead of time, numba is never imported."""

import json
import os
import subprocess
import sys

import pytest

from wheelsim.core.compiled import AHEAD_OF_TIME_SWITCH

# In a fresh process: the kernels' signatures after warm_up, and those a few hundred control
# steps added (none expected).
STEPS = '''
import json
import sys
from wheelsim.core.geometry.se2 import Pose2D, integrate_twist
from wheelsim.core.planning.lookup import compiled_value_at, point_at
from wheelsim.core.planning.planner import plan_through
from wheelsim.core.planning.waypoints import figure_eight, waypoints_from_lists
from wheelsim.core.tracking.controller import TrackingController
from wheelsim.core.tracking.limits import _limited
from wheelsim.core.tracking.projection import nearest_around, nearest_on_segments
from wheelsim.core.tracking.reference import BodyTwist
from wheelsim.core.tracking.warm_up import warm_up
from wheelsim.testing.configs import controller_for, planner_for

KERNELS = (point_at, compiled_value_at, nearest_on_segments, nearest_around, _limited,
           integrate_twist)


def signatures():
    if 'numba' not in sys.modules:  # compiled ahead of time: numba's JIT never asked
        return [[] for _ in KERNELS]
    return [sorted(map(str, kernel.signatures)) for kernel in KERNELS]


warm_up()
warm = signatures()
for model in ('differential', 'bicycle', 'omni'):
    vehicle = {'model': model}
    trajectory = plan_through(waypoints_from_lists(figure_eight(4.0)), planner_for(vehicle))
    for algorithm in ('feedforward', 'pure_pursuit', 'stanley'):
        controller = TrackingController(controller_for(vehicle, {'algorithm': algorithm}))
        controller.follow(trajectory, 0.0)
        for k in range(100):
            point = trajectory.at_time(0.05 * k)
            lag = 2.0 if k > 60 else 0.0  # behind the schedule: it waits
            pose = Pose2D(point.x_m - lag, point.y_m + 0.1, point.yaw_rad)
            if k == 40:  # put somewhere else: relocated
                pose = Pose2D(*trajectory.end()[2:5])
            controller.step(0.05 * k, pose, BodyTwist(point.vx_mps, 0.0, point.wz_radps))
print(json.dumps({'numba': 'numba' in sys.modules, 'warm': warm,
                  'added': [sorted(set(after) - set(before)) for before, after
                            in zip(warm, signatures())]}))
'''


@pytest.mark.slow
@pytest.mark.parametrize('ahead_of_time', ['1', '0'])
def test_after_the_warm_up_control_steps_load_no_kernel(ahead_of_time, request):
    if ahead_of_time == '1':
        request.getfixturevalue('ahead_of_time_kernels')
    result = subprocess.run([sys.executable, '-c', STEPS], capture_output=True, text=True,
                            env={**os.environ, AHEAD_OF_TIME_SWITCH: ahead_of_time},
                            timeout=600)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])
    if ahead_of_time == '1':
        assert not found['numba'], found
    else:
        assert all(found['warm']), found  # each kernel loaded
        assert not any(found['added']), found

