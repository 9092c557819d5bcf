"""What processes are doing, read from ``/proc`` (tests and benches, Linux only).

:func:`cpu_s`: the CPU time a process used so far. :func:`activity`: for a stack that stopped
answering, whether each of its processes is gone, blocked or busy, one line each: its id, state,
CPU seconds used over a short interval, its threads by state and the start of its command line,
e.g. ``4711 S cpu 0.00 s in 1.0 s, threads: 1 R, 11 S: component_container_isolated ...``.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

COMMAND_CHARACTERS = 100  # of a command line in a line of activity()


def _stat_fields(path: Path) -> list[str] | None:
    """The fields of a ``/proc/.../stat`` file after the command name (the state first); None
    when the process or thread ended."""
    try:
        return path.read_text().rpartition(')')[2].split()
    except OSError:
        return None


def _cpu_s(fields: list[str]) -> float:
    """User and system CPU seconds from the fields of :func:`_stat_fields`."""
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')  # utime, stime


def cpu_s(pid: int) -> float:
    """User plus system CPU seconds process ``pid`` (all its threads) used so far; OSError
    when it ended."""
    return _cpu_s(Path(f'/proc/{pid}/stat').read_text().rpartition(')')[2].split())


def _describe(pid: int, cpu_before_s: float | None, interval_s: float) -> str:
    fields = _stat_fields(Path(f'/proc/{pid}/stat'))
    if fields is None:
        return f'{pid} ended'
    used = ('cpu ?' if cpu_before_s is None
            else f'cpu {_cpu_s(fields) - cpu_before_s:.2f} s in {interval_s:.1f} s')
    threads = Counter()
    for task in Path(f'/proc/{pid}/task').glob('*/stat'):
        task_fields = _stat_fields(task)
        if task_fields is not None:
            threads[task_fields[0]] += 1
    by_state = ', '.join(f'{count} {state}' for state, count in sorted(threads.items()))
    try:
        command = Path(f'/proc/{pid}/cmdline').read_text().replace('\0', ' ').strip()
    except OSError:
        command = '?'
    return f'{pid} {fields[0]} {used}, threads: {by_state}: {command[:COMMAND_CHARACTERS]}'


def activity(pids: Iterable[int], interval_s: float = 1.0) -> list[str]:
    """One line per process of ``pids`` (by process id): state (``R`` running, ``S`` sleeping,
    ``D`` in uninterruptible wait, ``Z`` zombie, ...), CPU seconds it used during
    ``interval_s`` of wall time, its threads by state, the first :data:`COMMAND_CHARACTERS` of
    its command line; ``<pid> ended`` for one that is gone."""
    pids = sorted(pids)
    before = {}
    for pid in pids:
        fields = _stat_fields(Path(f'/proc/{pid}/stat'))
        before[pid] = None if fields is None else _cpu_s(fields)
    time.sleep(interval_s)
    return [_describe(pid, before[pid], interval_s) for pid in pids]
