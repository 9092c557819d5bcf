"""Reserve a ROS_DOMAIN_ID no other process on this machine holds, for tests, demos and benchmarks.

Two test runs at once must not see each other's nodes. A reservation is an exclusive ``flock`` on
``/tmp/wheelsim-ros-domains/<id>.lock``, released when the context exits or the process dies.
Domain IDs 1..100 are used (safe port range on Linux for DDS), or the range
``WHEELSIM_ROS_DOMAIN_IDS=FIRST-LAST`` names (a machine's share of them: several people or
benchmark jobs on one host, each its own range). The folder is shared by every
user of the machine (sticky, like /tmp), so it is refused when it is a symbolic link, and lock
files are opened without following symbolic links and without truncating: a planted link
``<id>.lock -> somebody's file`` is skipped and its target left untouched.
"""

from __future__ import annotations

import fcntl
import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from wheelsim.ros.distro import ros_distro

LOCK_DIR = Path('/tmp/wheelsim-ros-domains')
#: Where Fast DDS looks for its default XML profile: version 3 (Kilted) reads the first and warns
#: that the second is deprecated when it is set; version 2 (Jazzy) reads only the second.
PROFILE_VARIABLES = ('FASTDDS_DEFAULT_PROFILES_FILE', 'FASTRTPS_DEFAULT_PROFILES_FILE')
#: ROS 2 distributions whose default Fast DDS is version 2.
FAST_DDS_2_DISTROS = ('humble', 'iron', 'jazzy')
DOMAIN_IDS = range(1, 101)
DOMAIN_RANGE_VARIABLE = 'WHEELSIM_ROS_DOMAIN_IDS'


def _lock_dir(lock_dir: Path) -> Path:
    """``lock_dir``, created sticky and writable for all users; refused if it is a link."""
    if lock_dir.is_symlink() or (lock_dir.exists() and not lock_dir.is_dir()):
        raise RuntimeError(f'{lock_dir} is not a plain folder: refusing to keep locks there')
    if not lock_dir.exists():
        lock_dir.mkdir(parents=True, exist_ok=True)
        if lock_dir.stat().st_uid == os.getuid():
            lock_dir.chmod(0o1777)
    return lock_dir


def _open_lock(path: Path) -> int | None:
    """A descriptor of lock file ``path`` (created if missing, never truncated, never through a
    symbolic link); None when it cannot be opened that way."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError:  # a link (ELOOP), another user's file without write access
        return None


def domain_ids() -> range:
    """The domain IDs reservations choose from: :data:`DOMAIN_IDS`, or the sub-range
    ``WHEELSIM_ROS_DOMAIN_IDS=FIRST-LAST`` (inclusive) names; ValueError naming the variable
    and the allowed range when it is malformed."""
    text = os.environ.get(DOMAIN_RANGE_VARIABLE, '').strip()
    if not text:
        return DOMAIN_IDS
    first, sep, last = text.partition('-')
    try:
        chosen = range(int(first), int(last) + 1) if sep else range(int(text), int(text) + 1)
    except ValueError:
        chosen = range(0)
    if not chosen or chosen.start < DOMAIN_IDS.start or chosen.stop > DOMAIN_IDS.stop:
        raise ValueError(f'{DOMAIN_RANGE_VARIABLE}={text!r}: must be FIRST-LAST with '
                         f'{DOMAIN_IDS.start} <= FIRST <= LAST <= {DOMAIN_IDS.stop - 1}')
    return chosen


@contextmanager
def reserved_domain_id(lock_dir: Path = LOCK_DIR) -> Iterator[int]:
    """Yield a ROS domain ID of :func:`domain_ids` that no other reservation on this machine
    holds."""
    folder = _lock_dir(lock_dir)
    ids = domain_ids()
    candidates = list(ids)
    random.shuffle(candidates)
    for domain_id in candidates:
        descriptor = _open_lock(folder / f'{domain_id}.lock')  # held until release
        if descriptor is None:
            continue
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            continue
        try:
            yield domain_id
        finally:
            fcntl.flock(descriptor, fcntl.LOCK_UN)
            os.close(descriptor)
        return
    raise RuntimeError(f'all ROS domain IDs {ids.start}..{ids.stop - 1} are reserved')


def profile_variables() -> tuple[str, ...]:
    """The variable(s) that name Fast DDS's default profile for this ROS distribution
    (``ROS_DISTRO``, else ``WHEELSIM_DISTRO``): the one its Fast DDS reads, both if unknown."""
    distro = ros_distro()
    if not distro:
        return PROFILE_VARIABLES
    return PROFILE_VARIABLES[1:] if distro in FAST_DDS_2_DISTROS else PROFILE_VARIABLES[:1]


def use_profile(path: Path) -> None:
    """Make ``path`` Fast DDS's default profile in this process and its children, under the
    variable name this distribution reads (and only that one: :func:`profile_variables`)."""
    chosen = profile_variables()
    for variable in PROFILE_VARIABLES:
        if variable in chosen:
            os.environ[variable] = str(path)
        else:
            os.environ.pop(variable, None)


def require_loopback_dds() -> None:
    """Raise RuntimeError unless the environment keeps DDS on loopback (see tools/env.sh)."""
    variables = profile_variables()
    if not all(Path(os.environ.get(v, '')).is_file() and os.environ[v] for v in variables):
        raise RuntimeError(
            f'{" and ".join(variables)} must name the loopback profile: run tests and demos '
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
