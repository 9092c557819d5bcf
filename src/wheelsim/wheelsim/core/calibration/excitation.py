"""A command sequence that excites every actuator parameter ``wheelsim calibrate`` fits: what to
record on a robot (``docs/fidelity.md``), and what the tests and the benchmark record."""

from __future__ import annotations

Step = tuple[float, tuple[float, float, float]]  # (hold [s], command (vx, vy, wz))


def excitation(model: str, top_speed_mps: float) -> list[Step]:
    """Held steps that identify every actuator parameter of ``model``: small and large speed
    steps, a command beyond the top speed, reversals; for the bicycle steering steps at half
    the top speed (curvatures 0.05 to 0.3 1/m, and 1.5 1/m beyond any lock), for the omni
    sideways steps too."""
    v = top_speed_mps
    steps: list[Step] = [
        (1.0, (0.0, 0.0, 0.0)), (3.0, (0.3 * v, 0.0, 0.0)), (2.0, (0.0, 0.0, 0.0)),
        (3.0, (0.6 * v, 0.0, 0.0)), (3.0, (1.4 * v, 0.0, 0.0)), (2.5, (0.2 * v, 0.0, 0.0)),
        (3.0, (-0.7 * v, 0.0, 0.0)), (2.0, (0.0, 0.0, 0.0)), (2.5, (0.9 * v, 0.0, 0.0)),
        (2.5, (0.0, 0.0, 0.0)),
    ]
    if model == 'bicycle':
        cruise = 0.5 * v
        for curvature in (0.1, 0.0, -0.3, 0.0, 1.5, -0.05, 0.0):
            steps.append((2.5, (cruise, 0.0, curvature * cruise)))
        steps.append((2.5, (0.0, 0.0, 0.0)))
    elif model == 'differential':
        steps += [(2.5, (0.3 * v, 0.0, 0.5)), (2.5, (0.0, 0.0, -1.0)), (2.0, (0.0, 0.0, 0.0))]
    else:
        steps += [(2.5, (0.0, 0.5 * v, 0.0)), (2.5, (0.3 * v, -0.4 * v, 0.4)),
                  (2.0, (0.0, 0.0, 0.0))]
    return steps


