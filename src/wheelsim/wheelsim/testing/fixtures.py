"""pytest fixtures and markers shared by the package tests and the top-level system tests (needs
pytest). Each conftest.py calls :func:`register_markers` (the test command runs pytest with
``--strict-markers``, so a misspelt marker is an error), :func:`load_hypothesis_profile` and
:func:`start_long_tests_first`.
"""

import os

import pytest

from wheelsim.ros.dds_domain import loopback_domain
from wheelsim.testing.processes import Probe

#: The markers of tests that are not in the quick tier (``make test`` leaves them out,
#: ``make test-all`` runs them too, as CI's ``make ci`` does on Jazzy), and of tests that run
#: alone or start early (tools/run_tests.sh).
MARKERS = {
    'soak': 'many repetitions of what a quicker test checks once or a few times',
    'cluster': 'a Ray cluster of several processes on this machine: one of its own (`ray '
               'start`), or the local one of a sweep or tune that a signal reaches while Ray '
               'starts, runs or shuts down (the quick tier keeps the sweep and tune tests of '
               'what the commands give, and Ctrl-C resuming a sweep)',
    'slow': 'a long run: kernels compiled in fresh processes with a cold cache, or a variant '
            'of a long end-to-end test the quick tier runs in another variant',
    'alone': 'a tight margin against the wall clock: runs after the others, one at a time '
             '(in both tiers)',
    'nav2': 'stock Nav2 end to end (test/nav2; needs a Nav2: tools/nav2_env.sh or a ROS install)',
    'early': 'keeps a test process busy for 15 s or more: starts before the others, so that it '
             'does not run on alone at the end (in both tiers; soak, cluster and slow tests '
             'start early too)',
}

#: The markers of the tests that start first (:func:`start_long_tests_first`).
LONG_TEST_MARKERS = ('early', 'soak', 'cluster', 'slow')


def register_markers(config: pytest.Config) -> None:
    """Declare :data:`MARKERS` to pytest (call from ``pytest_configure``)."""
    for name, text in MARKERS.items():
        config.addinivalue_line('markers', f'{name}: {text}')


def start_long_tests_first(items: list[pytest.Item]) -> None:
    """Move the tests carrying one of :data:`LONG_TEST_MARKERS` to the front of ``items``, each
    part keeping its order (call from a ``pytest_collection_modifyitems`` that runs after
    pytest-random-order's shuffle). The test command's processes take work from the front
    and one that runs dry takes another's last tests (pytest-xdist's ``worksteal``), so a
    minute-long test drawn last no longer runs on while the other process waits."""
    items.sort(key=lambda item: not any(item.get_closest_marker(name)
                                        for name in LONG_TEST_MARKERS))


#: Set to 1 (``make test`` does, after ``make setup``): kernels not compiled ahead of time fail
#: the tests of them instead of skipping them.
REQUIRE_AHEAD_OF_TIME = 'WHEELSIM_TEST_REQUIRE_AHEAD_OF_TIME'


@pytest.fixture
def ahead_of_time_kernels() -> None:
    """The kernels compiled ahead of time for these sources (``make setup``; a plain ``colcon
    build`` does not): a test of them is skipped, saying why, where there are none, unless
    :data:`REQUIRE_AHEAD_OF_TIME` is 1."""
    from wheelsim.core.ahead_of_time import module_stem
    from wheelsim.core.compiled import kernel_folder

    folder = kernel_folder()
    if folder is not None and list(folder.glob(module_stem('core0') + '.*so')):
        return
    reason = (f'no kernels compiled ahead of time in {folder}: make setup (tools/bootstrap.sh) '
              'compiles them')
    if os.environ.get(REQUIRE_AHEAD_OF_TIME) == '1':
        pytest.fail(reason)
    pytest.skip(reason)


def load_hypothesis_profile() -> None:
    """Property tests without hypothesis's per-example deadline (200 ms by default; call from
    ``pytest_configure``): on a busy 2-core machine, a first example that loads a compiled
    kernel took 367 ms and failed a test whose examples take 0.08 ms. Tests that need a time
    bound assert it themselves."""
    from hypothesis import settings

    settings.register_profile('wheelsim', deadline=None)
    settings.load_profile('wheelsim')


@pytest.fixture
def ros_domain_id():
    """A ROS domain ID reserved for this test, exported in os.environ for child processes."""
    with loopback_domain() as domain_id:
        yield domain_id


@pytest.fixture
def probe(ros_domain_id):
    """A :class:`~wheelsim.testing.processes.Probe` on the test's reserved domain, closed after
    the test."""
    probe = Probe()
    yield probe
    probe.close()
