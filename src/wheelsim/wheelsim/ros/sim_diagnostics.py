"""``/diagnostics`` of vehicle_sim, every ``DIAGNOSTICS_PERIOD_S`` of wall time (the node calls
:meth:`SimDiagnostics.publish`).

Keys: ``clock mode``, ``real-time factor requested`` (reference clock), ``real-time factor
achieved`` (simulated seconds per wall second over the last period), ``steps per second`` (wall),
``simulated time [s]``, ``rejected commands`` (non-finite, or wheel commands the
vehicle cannot take), ``saturated commands``, ``stale
commands`` (expired or too old on arrival), ``backward time jumps``, ``skipped forward jumps``,
``cmd_vel type``, ``pacing restarts (fell behind)`` (reference clock: how often the machine was
more than 0.1 s of wall time behind the requested factor), and the world's: ``map``, ``scans
published``, ``collisions``, ``last collision at`` (:meth:`wheelsim.ros.sim_world.SimWorld.
diagnostics`). Level WARN while a reference clock
runs below 90 % of the requested factor, while the wall clock's stepping reaches less than 90 %
of ``step_rate`` (rates this machine cannot sustain: simulated time is then skipped; also logged,
at most every :data:`SLOW_WARNING_PERIOD_S`), and in the period in which a command was rejected
or time jumped, or the vehicle collided (the message then says where).
"""

from __future__ import annotations

import time

from wheelsim.core.units import NS_PER_S
from wheelsim.core.vehicle_sim.timeline import JumpKind
from wheelsim.ros.clock import ClockMode
from wheelsim.ros.cmd_vel import TYPE_NAMES
from wheelsim.ros.diagnostics import OK, WARN, DiagnosticsPublisher
from wheelsim.ros.seam import NodeSeam

DIAGNOSTICS_PERIOD_S = 1.0
SLOW_WARNING_PERIOD_S = 10.0


class SimDiagnostics:
    """Counters filled by the node and their periodic ``/diagnostics`` report."""

    def __init__(self, node, seam: NodeSeam) -> None:
        self._node = node
        self._seam = seam
        self._publisher = DiagnosticsPublisher(seam, 'simulation')
        self.steps = 0
        self.stale_commands = 0
        self.jumps = {JumpKind.BACKWARD: 0, JumpKind.FORWARD: 0}
        self._last_wall_ns = time.monotonic_ns()
        self._last_sim_ns = 0
        self._last_steps = 0
        self._last_troubles = 0
        self._last_collisions = 0
        self._reports = 0

    def restart(self, sim_ns: int) -> None:
        """Measure the achieved real-time factor from ``sim_ns`` (after a start or a jump)."""
        self._last_sim_ns = sim_ns

    def count_jump(self, kind: JumpKind) -> None:
        self.jumps[kind] += 1

    def publish(self) -> None:
        node = self._node
        wall_ns = time.monotonic_ns()
        elapsed_wall_ns = max(wall_ns - self._last_wall_ns, 1)
        sim_ns = node.timeline.now_ns if node.timeline is not None else 0
        factor = (sim_ns - self._last_sim_ns) / elapsed_wall_ns
        steps_per_s = (self.steps - self._last_steps) * NS_PER_S / elapsed_wall_ns
        troubles = node.cmd_vel.rejected + sum(self.jumps.values())
        world = node.world.diagnostics()
        level, message = OK, node.mode.value
        requested = node.settings.real_time_factor
        if node.timeline is None:
            level, message = WARN, 'waiting for /clock'
        elif node.mode is ClockMode.REFERENCE and requested and factor < 0.9 * requested:
            level, message = WARN, f'running at {factor:.3g}x, below the requested {requested:g}x'
        elif (node.mode is ClockMode.WALL and self._reports
              and steps_per_s < 0.9 * node.settings.step_rate):
            level, message = WARN, (
                f'stepping at {steps_per_s:.0f} steps/s, below step_rate '
                f'{node.settings.step_rate:g} Hz: this machine cannot keep up, simulated time is '
                'skipped; lower step_rate or pub_rate')
            self._seam.logger.warning(message, throttle_duration_sec=SLOW_WARNING_PERIOD_S)
        elif world['collisions'] != self._last_collisions:
            level, message = WARN, f'collision at {world["last collision at"]}'
        elif troubles != self._last_troubles:
            level, message = WARN, 'commands rejected or time jumped since the last report'
        values = {
            'clock mode': node.mode.value,
            'real-time factor achieved': factor,
            'steps per second': steps_per_s,
            'simulated time [s]': sim_ns / NS_PER_S,
            'rejected commands': node.cmd_vel.rejected,
            'saturated commands': node.cmd_vel.saturated,
            'stale commands': self.stale_commands,
            'backward time jumps': self.jumps[JumpKind.BACKWARD],
            'skipped forward jumps': self.jumps[JumpKind.FORWARD],
            'cmd_vel type': TYPE_NAMES[node.cmd_vel.msg_type],
        }
        values.update(world)
        if node.mode is ClockMode.REFERENCE:
            values['real-time factor requested'] = requested
            values['pacing restarts (fell behind)'] = node.pacer.lag_restarts
        self._publisher.publish(sim_ns, level, message, values)
        self._last_wall_ns, self._last_sim_ns, self._last_steps = wall_ns, sim_ns, self.steps
        self._last_troubles = troubles
        self._last_collisions = world['collisions']
        self._reports += 1
