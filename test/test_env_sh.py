"""env.sh, as a user sources it: ROS_DOMAIN_ID is the user's, or ROS's default when unset, so
two shells (and the Docker services on domain 0) see each other."""

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def sourced_domain(domain: str | None) -> str:
    """ROS_DOMAIN_ID in a fresh shell after ``source env.sh`` ('unset' if none)."""
    env = {k: v for k, v in os.environ.items() if k != 'ROS_DOMAIN_ID'}
    if domain is not None:
        env['ROS_DOMAIN_ID'] = domain
    done = subprocess.run(['bash', '-c', 'source env.sh >/dev/null 2>&1; '
                           'echo "${ROS_DOMAIN_ID-unset}"'],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_two_shells_get_the_same_domain_and_a_set_one_is_kept():
    assert sourced_domain(None) == 'unset'
    assert sourced_domain(None) == sourced_domain(None)
    assert sourced_domain('42') == '42'
