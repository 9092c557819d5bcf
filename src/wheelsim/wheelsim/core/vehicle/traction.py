"""Traction, compiled: the friction circle on the acceleration of the reference point R.

The wheels (rims and steering) ask for a twist at R, the kinematic twist (what the vehicle would
do if its tyres never slipped). The ground can only push R with an acceleration of at most
``mu * g``, in any direction (the friction circle). In body axes the acceleration of R going
from the twist ``(vx0, vy0, wz0)`` to ``(vx, vy, wz)`` over one step ``dt`` is

    a = (vx - vx0, vy - vy0) / dt + wz * (-vy0, vx0)

(the change of the body velocity, plus turning the present velocity at the new turn rate: the
centripetal part). Turning comes first: if turning the present velocity at the wanted rate
alone needs more than ``mu g``, the vehicle turns at the rate the friction allows (it slides
outwards) and its speed does not change. Otherwise the velocity change is cut to the largest
fraction ``k`` of the wanted one for which ``|a| <= mu g``, so speeding up and braking share the
friction left over by the turn. Rotation about R itself (a differential drive spinning in
place) is not limited.

What the wheels do beyond that is slip: a drive asked to accelerate harder than ``mu g`` spins
(its rim faster than the ground), one braked harder locks (its rim slower than the ground, at 0
when the drive stops). ``joint_states`` carry the rims, so they show it.
"""

from __future__ import annotations

import math

from wheelsim.core.compiled import compiled

GRAVITY_MPS2 = 9.81  # as the CommonRoad vehicle models


@compiled
def friction_limited_twist(
    vx0: float, vy0: float, vx: float, vy: float, wz: float, dt: float, limit: float
) -> tuple[float, float, float]:
    """The twist at R the ground realises over one step: from the body velocity ``(vx0, vy0)``
    [m/s] towards the wanted ``(vx, vy)`` [m/s] and turn rate ``wz`` [rad/s], with the
    acceleration of R at most ``limit`` = mu g [m/s^2] (see the module documentation)."""
    turn_x = -wz * vy0
    turn_y = wz * vx0
    turn_sq = turn_x * turn_x + turn_y * turn_y
    limit_sq = limit * limit
    if turn_sq >= limit_sq:
        return vx0, vy0, wz * limit / math.sqrt(turn_sq)
    change_x = (vx - vx0) / dt
    change_y = (vy - vy0) / dt
    change_sq = change_x * change_x + change_y * change_y
    along = change_x * turn_x + change_y * turn_y
    if change_sq + 2.0 * along + turn_sq <= limit_sq:
        return vx, vy, wz
    # largest k with |k * change + turn|^2 = limit^2 (turn_sq < limit_sq: one positive root)
    k = (math.sqrt(along * along - change_sq * (turn_sq - limit_sq)) - along) / change_sq
    return vx0 + k * (vx - vx0), vy0 + k * (vy - vy0), wz
