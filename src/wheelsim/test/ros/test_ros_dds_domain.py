"""Domain reservations: exclusive, and safe in a folder other users can write to."""

import os
import subprocess
import sys

import pytest

from wheelsim.ros.dds_domain import (
    DOMAIN_IDS,
    DOMAIN_RANGE_VARIABLE,
    PROFILE_VARIABLES,
    profile_variables,
    require_loopback_dds,
    reserved_domain_id,
    use_profile,
)


@pytest.fixture(autouse=True)
def whole_range(monkeypatch):
    """These tests choose among every domain ID unless they set the range themselves."""
    monkeypatch.delenv(DOMAIN_RANGE_VARIABLE, raising=False)


def test_reservations_stay_in_the_range_the_environment_names(tmp_path, monkeypatch):
    monkeypatch.setenv(DOMAIN_RANGE_VARIABLE, '60-61')
    with reserved_domain_id(tmp_path) as first, reserved_domain_id(tmp_path) as second:
        assert {first, second} == {60, 61}
        with pytest.raises(RuntimeError, match='60..61 are reserved'):
            with reserved_domain_id(tmp_path):
                pass


@pytest.mark.parametrize('text', ['0-5', '70-60', '60-101', 'sixty'])
def test_a_bad_range_is_an_error_naming_the_variable(tmp_path, monkeypatch, text):
    monkeypatch.setenv(DOMAIN_RANGE_VARIABLE, text)
    with pytest.raises(ValueError, match=f'{DOMAIN_RANGE_VARIABLE}=.*1 <= FIRST <= LAST <= 100'):
        with reserved_domain_id(tmp_path):
            pass


def test_two_reservations_never_share_an_id(tmp_path):
    with reserved_domain_id(tmp_path) as first, reserved_domain_id(tmp_path) as second:
        assert first != second
        assert first in DOMAIN_IDS and second in DOMAIN_IDS


def test_a_planted_link_is_skipped_and_its_target_left_untouched(tmp_path):
    victim = tmp_path / 'victim.txt'
    victim.write_text('precious data\n')
    locks = tmp_path / 'locks'
    locks.mkdir()
    for domain_id in list(DOMAIN_IDS)[:-1]:  # every lock but one is a link to the victim
        (locks / f'{domain_id}.lock').symlink_to(victim)
    with reserved_domain_id(locks) as domain_id:
        assert domain_id == DOMAIN_IDS[-1]
    assert victim.read_text() == 'precious data\n'


def test_a_linked_lock_folder_is_refused(tmp_path):
    (tmp_path / 'elsewhere').mkdir()
    (tmp_path / 'locks').symlink_to(tmp_path / 'elsewhere')
    with pytest.raises(RuntimeError, match='not a plain folder'):
        with reserved_domain_id(tmp_path / 'locks'):
            pass


def test_a_reservation_ends_with_its_process(tmp_path):
    code = ('import sys, time\nfrom pathlib import Path\n'
            'from wheelsim.ros.dds_domain import reserved_domain_id\n'
            f'with reserved_domain_id(Path({str(tmp_path)!r})) as d:\n'
            '    print(d, flush=True); time.sleep(30)\n')
    child = subprocess.Popen([sys.executable, '-c', code], stdout=subprocess.PIPE, text=True)
    held = int(child.stdout.readline())
    child.kill()
    child.wait()
    lock = os.open(tmp_path / f'{held}.lock', os.O_RDWR)
    import fcntl
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free again: no BlockingIOError
    os.close(lock)


@pytest.mark.parametrize('distro, variables', [
    ('jazzy', ('FASTRTPS_DEFAULT_PROFILES_FILE',)),
    ('humble', ('FASTRTPS_DEFAULT_PROFILES_FILE',)),
    ('kilted', ('FASTDDS_DEFAULT_PROFILES_FILE',)),
    ('rolling', ('FASTDDS_DEFAULT_PROFILES_FILE',)),
    ('', PROFILE_VARIABLES),
])
def test_the_profile_is_named_only_where_the_distros_fast_dds_reads_it(
        monkeypatch, tmp_path, distro, variables):
    """Fast DDS 3 (Kilted) warns at every start when the Fast DDS 2 name is set; Fast DDS 2
    (Jazzy) reads only that name. Unknown distro: both."""
    monkeypatch.delenv('ROS_DISTRO', raising=False)
    monkeypatch.setenv('WHEELSIM_DISTRO', distro)
    for variable in PROFILE_VARIABLES:
        monkeypatch.setenv(variable, 'stale')
    profile = tmp_path / 'profile.xml'
    profile.write_text('<profiles/>')
    assert profile_variables() == variables
    use_profile(profile)
    assert {v: os.environ.get(v) for v in PROFILE_VARIABLES} == {
        v: str(profile) if v in variables else None for v in PROFILE_VARIABLES}
    require_loopback_dds()
    if distro:  # a sourced ROS_DISTRO wins over WHEELSIM_DISTRO
        monkeypatch.setenv('ROS_DISTRO', 'kilted' if distro in ('jazzy', 'humble') else 'jazzy')
        with pytest.raises(RuntimeError, match='must name the loopback profile'):
            require_loopback_dds()
