"""env.sh, as a user sources it: ROS_DOMAIN_ID is the user's, or ROS's default when unset, so
two shells (and the Docker services on domain 0) see each other; a shell set up for one distro
refuses the other."""

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


def test_a_shell_set_up_for_one_distro_refuses_the_other_and_keeps_its_paths():
    # Reproduced: `source env.sh` (Jazzy), then `make setup DISTRO=kilted` in that shell built
    # install/kilted chained to Jazzy's prefixes, and Kilted's launch tests ran Jazzy's nodes.
    # The shell of one distro is what activating its venv leaves: VIRTUAL_ENV names it (set here
    # directly, so the test also runs where set-up used a sourced ROS and made no venv).
    distro = os.environ.get('WHEELSIM_DISTRO', 'jazzy')
    other = 'kilted' if distro == 'jazzy' else 'jazzy'
    env = {k: v for k, v in os.environ.items() if k != 'ROS_DISTRO'}
    env.update(WHEELSIM_DISTRO=distro, VIRTUAL_ENV=str(REPO / '.venv' / distro))
    script = ('before="$AMENT_PREFIX_PATH $PYTHONPATH $PATH"; '
              f'WHEELSIM_DISTRO={other} source env.sh; echo "status $?"; '
              '[ "$before" = "$AMENT_PREFIX_PATH $PYTHONPATH $PATH" ] && echo "paths kept"; '
              'echo "venv ${VIRTUAL_ENV##*/} distro $WHEELSIM_DISTRO"')
    done = subprocess.run(['bash', '-c', script], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.split('\n')[:3] == ['status 2', 'paths kept',
                                           f'venv {distro} distro {distro}']
    assert done.stderr.strip() == (f"env.sh: this shell has wheelsim's {distro} environment: "
                                   f"open a new shell for {other} (its paths would mix with "
                                   f"{distro}'s)")
