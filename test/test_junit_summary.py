"""tools/junit_summary.py, the test command's summary line: a result file that is missing (its
test process ended at a test's time limit) fails the run and is named, after the counts of the
files that are there."""

import subprocess
import sys

from bringup_support import REPO

RESULT = '''<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="4">
<testcase classname="t" name="a"/><testcase classname="t" name="b"/>
<testcase classname="t" name="c"><failure message="no"/></testcase>
<testcase classname="t" name="d"><skipped message="Skipped: no Nav2 here"/></testcase>
</testsuite></testsuites>
'''


def summary(*paths) -> tuple[int, str]:
    done = subprocess.run([sys.executable, 'tools/junit_summary.py', *map(str, paths)],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout


def test_counts_and_reasons(tmp_path):
    (tmp_path / 'a.xml').write_text(RESULT)
    code, output = summary(tmp_path / 'a.xml')
    assert code == 1
    assert output.splitlines() == ['2 passed, 1 failed, 1 skipped', '  1 not run: no Nav2 here']


def test_a_missing_file_is_named_after_the_counts_of_the_others(tmp_path):
    (tmp_path / 'a.xml').write_text(RESULT.replace('failures="1"', 'failures="0"'))
    code, output = summary(tmp_path / 'gone.xml', tmp_path / 'a.xml')
    assert code == 1
    lines = output.splitlines()
    assert lines[0] == '3 passed, 0 failed, 1 skipped', output
    assert lines[-1].startswith(f'missing or unreadable test result {tmp_path / "gone.xml"}:')
