"""Step a vehicle through the world so that its footprint never enters an obstacle.

:class:`CollisionGuard` steps a :class:`~wheelsim.core.vehicle.model.Vehicle` (the compiled
kernel is untouched) and checks the footprint between steps:

- **Far from obstacles** a whole batch is taken at once: if no footprint point moved further
  than the clearance the batch started with (:meth:`OccupancyMap.clearance_lower_bound` minus
  the footprint's radius), nothing can have been touched. How far a point moved in a batch is
  taken as the larger of the arc between its end poses and its duration times the fastest of
  the body twists at its ends and the held command: a path that turns back, or turns by more
  than half a turn, within a batch is not taken for the short arc between its ends.
- **Near obstacles** the batch is split into sub-batches in which no footprint point moves more
  than half a cell, and the footprint is checked exactly against the obstacle cells at the end
  of each (:func:`wheelsim.core.world.collision.contact`); a sub-batch that moved further is
  undone (:meth:`Vehicle.restore`) and split.
- **One step** moves the vehicle along an exact arc (a constant body twist over the step); a
  step that moves a footprint point more than half a cell is checked at poses along that arc
  at most half a cell apart, so a fast vehicle (or a low step rate) cannot jump over a wall
  however far one step goes.

On contact the steps are redone one by one from the last accepted state to find the contact
step, the contact pose is bisected along that step's arc to within 1/64 of a cell, and the
vehicle is stopped at the last free pose (:meth:`Vehicle.stop`): it stays out of the obstacle,
at rest, and drives on as commanded from the next step (pushing against the wall stops it again).

Within one sub-batch of several steps the path is taken as the arc between its end poses: the
vehicle is assumed not to turn back within a sub-batch (it moves at most half a cell in one).
The one motion this does not bound is a speed beyond both ends' and the held command's inside
a batch: a command still in flight (an actuator's dead time) that is faster than all three.

A vehicle that starts a batch overlapping an obstacle (teleported there, or a new map) is not
held: it drives until it is clear, and :attr:`CollisionGuard.stuck` says so meanwhile.
"""

from __future__ import annotations

import math

from wheelsim.core.geometry.se2 import arc_factors, compose_floats, integrate_twist, inverse_floats
from wheelsim.core.vehicle.model import Vehicle
from wheelsim.core.world.collision import Contact, clearances, contact
from wheelsim.core.world.footprint import Footprint
from wheelsim.core.world.occupancy import OccupancyMap

Pose = tuple[float, float, float]
SAMPLE_CELLS = 0.5  # largest footprint-point move between two checked poses [cells]
BISECTION_CELLS = 1.0 / 64.0  # how close the stop pose gets to the contact [cells]
MAX_SUB_BATCH = 1 << 30
RELEASE_CELLS = 0.5  # clearance after which a touching vehicle counts as free again [cells]


def arc_between(start: Pose, end: Pose) -> tuple[float, float, float]:
    """The constant body twist ``(vx, vy, wz)`` per unit time that moves ``start`` to ``end``
    (the SE(2) logarithm, for turns below pi)."""
    dx, dy, dyaw = compose_floats(inverse_floats(start), end)
    a, b = arc_factors(dyaw)
    scale = 1.0 / (a * a + b * b)
    return scale * (a * dx + b * dy), scale * (a * dy - b * dx), dyaw


def along_arc(start: Pose, twist: tuple[float, float, float], fraction: float) -> Pose:
    """The pose a ``fraction`` of the way along the arc ``twist`` from ``start``."""
    return integrate_twist(*start, *twist, fraction)


class CollisionGuard:
    """Steps vehicles through one map with one footprint; counts collisions."""

    def __init__(self, world: OccupancyMap, footprint: Footprint) -> None:
        self.world = world
        self.footprint = footprint
        self._radius_m = footprint.radius_m
        self._sample_m = SAMPLE_CELLS * world.resolution_m
        self._k_hint = MAX_SUB_BATCH  # steps to try at once
        self.collisions = 0
        """Contacts counted so far: each time the vehicle touches after having been clear."""
        self.last_contact: Contact | None = None
        """The first contact of the last collision counted (what :meth:`step` returned then;
        not the cells touched while the vehicle stays in contact)."""
        self.last_contact_step = 0
        """Of the collision :meth:`step` returned last: the contact step, counted from 1 at
        the first step of that call."""
        self.touching = False
        """In contact, or within half a cell of the last contact, since the last contact."""
        self.stuck = False
        """The last batch started with the footprint overlapping an obstacle."""

    def _travel_m(self, twist: tuple[float, float, float]) -> float:
        """Longest path of a footprint point along the arc ``twist`` (per unit time: at the
        body twist ``twist``, the fastest point's speed)."""
        return math.hypot(twist[0], twist[1]) + abs(twist[2]) * self._radius_m

    def _contact(self, pose: Pose) -> Contact | None:
        return contact(self.world, self.footprint, pose)

    def step(self, vehicle: Vehicle, n_steps: int) -> Contact | None:
        """Step ``vehicle`` ``n_steps`` steps without entering an obstacle.

        Returns the contact if a new collision began during these steps (then counted in
        :attr:`collisions`), else None.
        """
        new_collision = None
        remaining = n_steps
        while remaining > 0:
            start = vehicle.pose
            free_m = self.world.clearance_lower_bound(start[0], start[1]) - self._radius_m
            near = free_m < self._sample_m
            self.stuck = near and self._contact(start) is not None
            if self.stuck:  # already overlapping: not held until clear
                vehicle.step(remaining)
                break
            k = min(remaining, self._k_hint)
            saved = vehicle.snapshot()
            speed_mps = max(self._travel_m(vehicle.twist), self._travel_m(vehicle.command))
            vehicle.step(k)
            end = vehicle.pose
            speed_mps = max(speed_mps, self._travel_m(vehicle.twist))
            travel_m = max(self._travel_m(arc_between(start, end)),
                           speed_mps * k * vehicle.step_period_s)
            allowed_m = max(free_m, self._sample_m)
            hit = None
            if travel_m <= free_m:
                taken = k  # no footprint point can have reached an obstacle
            elif k > 1 and travel_m > allowed_m:  # too far to judge: split
                vehicle.restore(saved)
                self._k_hint = max(1, int(k * allowed_m / travel_m))
                continue
            elif k > 1 and self._contact(end) is None:
                taken = k  # a short sub-batch (at most half a cell) ending free
            else:  # one step, or a short sub-batch ending in contact: step by step
                if k > 1:
                    vehicle.restore(saved)
                    end = None
                taken, hit = self._single_steps(vehicle, k, start, end)
            remaining -= taken
            if hit is not None and not self.touching:
                self.last_contact_step = n_steps - remaining
            if hit is None:
                self._k_hint = min(2 * k, MAX_SUB_BATCH)
                continue
            self._k_hint = 1
            if not self.touching:  # a new collision: its first contact is the one reported
                self.last_contact = hit
                self.collisions += 1
                new_collision = new_collision or hit
            self.touching = True
        if self.touching:
            clear_m = clearances(self.world, self.footprint, [vehicle.pose])[0]
            self.touching = clear_m <= RELEASE_CELLS * self.world.resolution_m
        return new_collision

    def _single_steps(self, vehicle: Vehicle, k: int, start: Pose, end: Pose | None
                      ) -> tuple[int, Contact | None]:
        """Up to ``k`` steps one by one (the first already taken when ``end`` is given), each
        checked along its arc; stops at the first contact. Returns (steps taken, contact)."""
        for taken in range(1, k + 1):
            if end is None:
                vehicle.step(1)
                end = vehicle.pose
            hit = self._stop_at_contact(vehicle, start, end)
            if hit is not None:
                return taken, hit
            start, end = end, None
        return k, None

    def _stop_at_contact(self, vehicle: Vehicle, start: Pose, end: Pose) -> Contact | None:
        """Check the arc of one step from ``start`` to ``end`` at poses at most half a cell
        apart; at a contact, stop the vehicle at the last free pose (bisected) and return it."""
        twist = arc_between(start, end)
        travel_m = self._travel_m(twist)
        samples = max(1, math.ceil(travel_m / self._sample_m))
        free_fraction = 0.0
        for j in range(1, samples + 1):
            fraction = j / samples
            hit = self._contact(along_arc(start, twist, fraction))
            if hit is None:
                free_fraction = fraction
                continue
            low, high = free_fraction, fraction
            limit = BISECTION_CELLS * self.world.resolution_m / max(travel_m, 1e-12)
            while high - low > limit:
                middle = 0.5 * (low + high)
                found = self._contact(along_arc(start, twist, middle))
                if found is None:
                    low = middle
                else:
                    high, hit = middle, found
            vehicle.stop(along_arc(start, twist, low))
            return hit
        return None
