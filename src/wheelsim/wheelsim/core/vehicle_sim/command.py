"""How old vehicle_sim's held command is, and when it goes stale (``twist_reference_max_oldness``).

A TwistStamped command counts from its stamp, a Twist (no stamp) from its arrival; a stamp in
the future (another machine's clock) counts from the arrival. A command older than
``max_oldness_s`` is stale: the vehicle then brakes through its actuators. 0 means never stale.
Times are integer nanoseconds of simulated time. No ROS imports.
"""

from __future__ import annotations

from dataclasses import dataclass

from wheelsim.core.units import NS_PER_S


@dataclass
class CommandAge:
    """The time the held command counts from (``None``: no command held)."""

    max_oldness_s: float
    time_ns: int | None = None

    def receive(self, now_ns: int, stamp_ns: int | None) -> bool:
        """A new command arrives at ``now_ns``; return True if it is fresh, False if stale."""
        self.time_ns = now_ns if stamp_ns is None else min(stamp_ns, now_ns)
        return self.max_oldness_s == 0.0 or now_ns - self.time_ns <= self.max_oldness_s * NS_PER_S

    def age_s(self, now_ns: int) -> float:
        """Seconds since the held command's time (0 without one)."""
        return 0.0 if self.time_ns is None else (now_ns - self.time_ns) / NS_PER_S

    def deadline_ns(self) -> int | None:
        """The last time at which the held command is fresh (``None``: it never goes stale)."""
        if self.time_ns is None or self.max_oldness_s == 0.0:
            return None
        return self.time_ns + round(self.max_oldness_s * NS_PER_S)

    def clear(self) -> None:
        """No command held any more (reset, backward time jump)."""
        self.time_ns = None
