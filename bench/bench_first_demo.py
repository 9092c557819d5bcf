"""A user's first ``make demo`` on a fresh clone, side by side with a baseline revision.

Run from any shell (nothing sourced is passed on):
    python3 bench/bench_first_demo.py [--runs 2] [--baseline REV] [--revision REV]

Each run clones this repository at the revision into a new temporary folder with nothing beside
it (no launch tooling, no Nav2) and runs ``make demo`` there as a new machine would: an
environment with only ``PATH`` (no virtual environment, no ROS), ``HOME`` and the locale, and
empty download caches of pip and uv and an empty matplotlib cache, so that every wheel is
downloaded again (``--dont-write-bytecode``: with ``PYTHONDONTWRITEBYTECODE=1`` too, as on
machines and images that set it). Runs alternate between the baseline and the revision. Per
run: the whole command's wall time and CPU time (user + system of ``make`` and everything it
started, from ``wait4``), process start to exit, and the wall time of its three phases (from
the time each line of output arrived): the venv and its wheels; the build (tf2_msgs, colcon and
the kernels, one after the other or at once); the scenario. Downloads make the first phase
depend on the network: compare the two revisions within one invocation.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Each phase ends at the first line matching one of its patterns; the scenario ends with the
# command.
PHASES = (
    ('venv and wheels', re.compile(r'\[setup\] (generating tf2_msgs|building the workspace|'
                                   r'loading the compiled kernels \()')),
    ('build', re.compile(r'\[setup\] compiled kernels loaded for bicycle')),
)
PASSED = re.compile(r'cross_track_rms_m .* pass')


def clean_environment(home: Path, dont_write_bytecode: bool) -> dict[str, str]:
    """``PATH`` without virtual environments, ``HOME`` and the locale; caches under ``home``."""
    path = [p for p in os.environ['PATH'].split(os.pathsep)
            if not Path(p, 'activate').exists()]
    return {
        **({'PYTHONDONTWRITEBYTECODE': '1'} if dont_write_bytecode else {}),
        'PATH': os.pathsep.join(path),
        'HOME': os.environ['HOME'],
        'LANG': os.environ.get('LANG', 'C.UTF-8'),
        'PIP_CACHE_DIR': str(home / 'pip-cache'),
        'UV_CACHE_DIR': str(home / 'uv-cache'),
        'MPLCONFIGDIR': str(home / 'matplotlib'),
    }


def one_run(revision: str, dont_write_bytecode: bool) -> dict:
    """Clone ``revision`` into a new folder and time its first ``make demo``."""
    with tempfile.TemporaryDirectory(prefix='wheelsim-first-demo-') as folder:
        home = Path(folder)
        clone = home / 'wheelsim'
        subprocess.run(['git', 'clone', '-q', str(REPO), str(clone)], check=True)
        subprocess.run(['git', '-C', str(clone), 'checkout', '-q', revision], check=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start_s = time.perf_counter()
        process = subprocess.Popen(['make', 'demo'], cwd=clone,
                                   env=clean_environment(home, dont_write_bytecode),
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        ends: dict[str, float] = {}
        output = []
        for line in process.stdout:
            output.append(line)
            for name, pattern in PHASES:
                if name not in ends and pattern.search(line):
                    ends[name] = time.perf_counter() - start_s
        process.wait()
        wall_s = time.perf_counter() - start_s
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode != 0 or not any(PASSED.search(line) for line in output):
        sys.exit(f'make demo of {revision} failed (exit {process.returncode}):\n'
                 + ''.join(output[-30:]))
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    milestones = [0.0, *(ends[name] for name, _ in PHASES), wall_s]
    phases = {name: later - at for name, at, later in
              zip([*(name for name, _ in PHASES), 'scenario'], milestones[:-1], milestones[1:],
                  strict=True)}
    return {'wall_s': wall_s, 'cpu_s': cpu_s, 'phases': phases}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=2, help='runs of each revision (default 2)')
    parser.add_argument('--baseline', help='git revision to compare with')
    parser.add_argument('--revision', default='HEAD', help='git revision (default HEAD)')
    parser.add_argument('--dont-write-bytecode', action='store_true',
                        help='run with PYTHONDONTWRITEBYTECODE=1')
    args = parser.parse_args()
    revisions = [rev for rev in (args.baseline, args.revision) if rev]
    # Resolved once: HEAD may move while the runs go on.
    commits = [subprocess.run(['git', '-C', str(REPO), 'rev-parse', rev], check=True,
                              capture_output=True, text=True).stdout.strip() for rev in revisions]
    print(f'{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}')
    print('| revision | whole command wall | whole command CPU | phases (wall) |')
    print('|---|---|---|---|')
    for _ in range(args.runs):
        for commit in commits:
            run = one_run(commit, args.dont_write_bytecode)
            phases = ', '.join(f'{name} {s:.0f} s' for name, s in run['phases'].items())
            print(f'| `{commit[:7]}` | {run["wall_s"]:.0f} s | {run["cpu_s"]:.0f} s | {phases} |',
                  flush=True)


if __name__ == '__main__':
    main()
