"""Command imperfections of an actuator, compiled: resolution, bias, noise and dead band.

A real actuator does not receive the reference a controller computed: its interface rounds it,
its zero is off, its electronics add noise, and small commands do not move it (stiction, an
on-centre steering dead band). Applied to a reference ``u`` (m/s for a drive, rad for a
steering) before the dead time, in this order:

1. resolution ``q`` (0 = continuous): ``u = q * round(u / q)``, halves away from zero, the
   ratio ``|u| / q`` first rounded to 9 decimals as a dead time's (0.35 at 0.1 -> 0.4:
   :func:`wheelsim.core.vehicle.actuators.round_half_up`);
2. bias ``b``: ``u = u + b``;
3. noise: ``u = u + sigma * n``, ``n`` standard normal, a new draw at every step;
4. dead band ``d``: ``u = 0`` if ``|u| <= d``, else unchanged.

The noise is counter-based: the draw of step ``k`` of actuator ``a`` is a hash of
``(seed, k, a)`` (:func:`standard_normal`), so it does not depend on how the steps are batched,
on the number of vehicles in a batch or on threads; a run is repeated bit for bit from its seed.
"""

from __future__ import annotations

import math

import numpy as np

from wheelsim.core.compiled import compiled
from wheelsim.core.vehicle.actuators import round_half_up

MASK32 = 0xFFFFFFFF
TWO_POW_32 = 4294967296.0


@compiled
def mix32(value: int) -> int:
    """A 32-bit integer hash (C. Wellons' lowbias32) of the low 32 bits of ``value``.

    Written so that compiled code (int64 products that wrap) and plain Python (exact integers)
    give the same bits: every product is masked to its low 32 bits, which wrapping keeps.
    """
    x = value & MASK32
    x ^= x >> 16
    x = (x * 0x7FEB352D) & MASK32
    x ^= x >> 15
    x = (x * 0x846CA68B) & MASK32
    x ^= x >> 16
    return x


@compiled
def _uniform(seed_low: int, seed_high: int, step: int, stream: int) -> float:
    """A uniform number in (0, 1) from the hash of ``(seed, step, stream)``."""
    h = mix32(stream * 0x9E3779B9 + 0x632BE5AB)
    h = mix32(h ^ (step & MASK32))
    h = mix32(h ^ ((step >> 32) & MASK32))
    h = mix32(h ^ seed_low)
    h = mix32(h ^ seed_high)
    return (h + 0.5) / TWO_POW_32


@compiled
def standard_normal(seed_low: int, seed_high: int, step: int, actuator: int) -> float:
    """The standard normal draw of ``actuator`` at ``step`` (Box-Muller on two hashed
    uniforms); ``seed_low``/``seed_high`` are the low and high 32 bits of the seed."""
    u1 = _uniform(seed_low, seed_high, step, 2 * actuator)
    u2 = _uniform(seed_low, seed_high, step, 2 * actuator + 1)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


@compiled
def normal_draws(seed_low: int, seed_high: int, first_step: int, n_steps: int, actuators: int):
    """(n_steps, actuators) array: :func:`standard_normal` of every actuator at the steps
    ``first_step ...``; drawn before a batch of steps, so the stepping code stays small."""
    out = np.empty((n_steps, actuators))
    for i in range(n_steps):
        for actuator in range(actuators):
            out[i, actuator] = standard_normal(seed_low, seed_high, first_step + i, actuator)
    return out


@compiled
def imperfect_reference(
    reference: float, resolution: float, bias: float, noise_stddev: float, dead_band: float,
    noise: float,
) -> float:
    """``reference`` after resolution, bias, noise (``noise_stddev`` times the standard normal
    draw ``noise``) and dead band, in that order (see the module documentation)."""
    u = reference
    ratio = abs(u) / resolution if resolution > 0.0 else math.inf
    if math.isfinite(ratio):  # not with a resolution so fine that the ratio overflows
        u = math.copysign(round_half_up(ratio) * resolution, u)
    u = u + bias + noise_stddev * noise
    if abs(u) <= dead_band:
        return 0.0
    return u
