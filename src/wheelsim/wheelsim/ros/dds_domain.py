"""Reserve a ROS_DOMAIN_ID no other process on this machine holds, for tests, demos and benchmarks.

Two test runs at once must not see each other's nodes. A reservation is an exclusive ``flock`` on
``/tmp/wheelsim-ros-domains/<id>.lock``, released when the context exits or the process dies.
Domain IDs 1..100 are used (safe port range on Linux for DDS).
"""

from __future__ import annotations

import fcntl
import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_DIR = Path('/tmp/wheelsim-ros-domains')
DOMAIN_IDS = range(1, 101)


@contextmanager
def reserved_domain_id() -> Iterator[int]:
    """Yield a ROS domain ID that no other reservation on this machine holds."""
    LOCK_DIR.mkdir(parents=True, exist_ok=True)
    candidates = list(DOMAIN_IDS)
    random.shuffle(candidates)
    for domain_id in candidates:
        handle = open(LOCK_DIR / f'{domain_id}.lock', 'w')  # held until release
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        try:
            yield domain_id
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()
        return
    raise RuntimeError(f'all ROS domain IDs {DOMAIN_IDS.start}..{DOMAIN_IDS.stop - 1} are reserved')


def require_loopback_dds() -> None:
    """Raise RuntimeError unless the environment keeps DDS on loopback (see tools/env.sh)."""
    profile = os.environ.get('FASTDDS_DEFAULT_PROFILES_FILE', '')
    if not profile or not Path(profile).is_file():
        raise RuntimeError(
            'FASTDDS_DEFAULT_PROFILES_FILE is not set to an existing file: run tests and demos '
            'through `make test` / `make demo` or after `source env.sh`, which keep DDS on loopback'
        )


@contextmanager
def loopback_domain() -> Iterator[int]:
    """Reserve a ROS domain ID and export it to this process and its children (loopback DDS)."""
    require_loopback_dds()
    previous = os.environ.get('ROS_DOMAIN_ID')
    with reserved_domain_id() as domain_id:
        os.environ['ROS_DOMAIN_ID'] = str(domain_id)
        try:
            yield domain_id
        finally:
            if previous is None:
                os.environ.pop('ROS_DOMAIN_ID', None)
            else:
                os.environ['ROS_DOMAIN_ID'] = previous
