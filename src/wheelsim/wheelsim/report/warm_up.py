"""Prepare the report's compiled kernels once: ``python -m wheelsim.report.warm_up``.

The counterpart of :mod:`wheelsim.core.warm_up` (the nodes' kernels) for the run report:
``make setup`` and the Docker image run both, so that a run does not compile the matching of
the driven path to the plan for its metrics (about 5 s of CPU on the development machine) and
loads it without numba (compiled ahead of time, :mod:`wheelsim.core.ahead_of_time`).
"""

from __future__ import annotations

import numpy as np

from wheelsim.core.ahead_of_time import prepare
from wheelsim.report.geometry import Polyline


def warm_up() -> None:
    """Match a short driven path to a short plan, as a run's tracking errors are computed."""
    plan = Polyline(np.array([0.0, 1.0, 2.0]), np.array([0.0, 0.0, 1.0]),
                    np.array([0.0, 0.0, 1.0]))
    plan.match(np.array([0.1, 0.5, 5.0]), np.array([0.1, 0.0, 5.0]))  # the last far off


if __name__ == '__main__':
    prepare('report', warm_up)
    print('wheelsim: compiled kernels loaded for the report')
