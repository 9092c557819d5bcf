"""The order the test command runs tests in (tools/run_tests.sh): pytest-random-order shuffles
them, then the tests marked to start early (and those of the long tiers' marks) move to the
front, so that none of them runs on alone at the end."""

import subprocess
import sys

from bringup_support import REPO

from wheelsim.testing.fixtures import LONG_TEST_MARKERS

EARLY = ('test/test_install.py::'
         'test_a_plain_colcon_build_installs_every_node_and_its_executables_run')


def test_the_long_tests_start_first_whatever_the_shuffle_drew(request):
    # this run's own order
    starts_early = [any(item.get_closest_marker(name) for name in LONG_TEST_MARKERS)
                    for item in request.session.items]
    assert starts_early == sorted(starts_early, reverse=True)
    # an order in which the shuffle alone puts the marked test 75th of 82 (at 2026-11-30)
    collect = subprocess.run(
        [sys.executable, '-m', 'pytest', '--collect-only', '-q', '-p', 'no:cacheprovider',
         '--strict-markers', '-p', 'random_order', '--random-order-bucket=global',
         '--random-order-seed=1', 'test/test_install.py', 'test/test_bringup_params.py'],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    assert collect.returncode == 0, collect.stdout + collect.stderr
    order = [line for line in collect.stdout.splitlines() if '::' in line]
    assert len(order) > 60 and order[0] == EARLY, order
