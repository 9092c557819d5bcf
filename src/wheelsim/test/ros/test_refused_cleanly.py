"""Whether a node process that refused its start-up input ended as promised
(wheelsim.testing.processes.refused_cleanly, used by the nodes' bad-input tests)."""

import pytest

from wheelsim.testing.processes import refused_cleanly

ERROR = ('vehicle_sim: error: parameter step_rate = -5.0 is invalid: must be a finite number in '
         '[1, 100000]\n')
#: What a refused vehicle_sim prints when faulthandler ends its teardown at the limit: the main
#: thread's frames as in the Kilted hang of 2026-12-01 (Fast DDS 3.2's set_listener spinning in
#: the participant's deletion, eProsima/Fast-DDS#6513).
TEARDOWN_HANG = '\n'.join([
    'Timeout (0:00:03)!',
    'Thread 0x00007f7b50f846c0 (most recent call first):',
    '  File "/w/build/wheelsim/wheelsim/ros/shutdown.py", line 177 in _watch',
    '  File "/usr/lib/python3.11/threading.py", line 982 in run',
    '',
    'Thread 0x00007f7b51bda640 (most recent call first):',
    '  File "/w/site-packages/rclpy/node.py", line 2082 in destroy_node',
    '  File "/w/build/wheelsim/wheelsim/ros/seam.py", line 185 in destroy',
    '  File "/w/build/wheelsim/wheelsim/ros/node_main.py", line 147 in _run',
    '  File "/w/build/wheelsim/wheelsim/ros/node_main.py", line 106 in run_node', ''])


def test_exit_2_passes_and_a_known_teardown_hang_after_the_error_passes_with_a_warning():
    assert refused_cleanly('vehicle_sim', 2, ERROR)
    with pytest.warns(UserWarning, match="vehicle_sim: the shutdown hung in rclpy's"):
        assert refused_cleanly('vehicle_sim', 1, ERROR + TEARDOWN_HANG)


def test_any_other_end_fails():
    assert not refused_cleanly('vehicle_sim', 0, ERROR)
    assert not refused_cleanly('vehicle_sim', -11, ERROR)
    assert not refused_cleanly('vehicle_sim', 1, ERROR)  # no dump
    assert not refused_cleanly('vehicle_sim', 1, TEARDOWN_HANG)  # no error line before it
    assert not refused_cleanly('planner', 1, ERROR + TEARDOWN_HANG)  # another node's error
    elsewhere = TEARDOWN_HANG.replace('in destroy_node', 'in spin_once')
    assert not refused_cleanly('vehicle_sim', 1, ERROR + elsewhere)
