"""Whether a node of a ``ros2 launch`` stopped cleanly, read from launch's output
(wheelsim.testing.processes.launched_node_stopped_cleanly, used by the stock Nav2 tests)."""

import pytest

from wheelsim.testing.processes import launched_node_stopped_cleanly

#: What the CI run of 2026-11-28 printed when vehicle_sim's Fast DDS participant deletion hung
#: after Ctrl-C among 17 Nav2 processes ending at once (other processes' lines interleave).
TEARDOWN_HANG_OUTPUT = '\n'.join([
    '[vehicle_sim-1] Timeout (0:00:00.861441)!',
    '[vehicle_sim-1] Thread 0x00007fc44057e6c0 (most recent call first):',
    '[vehicle_sim-1]   File "/w/build/wheelsim/wheelsim/ros/shutdown.py", line 155 in _watch',
    '[planner_server-9] [INFO] [1795901876.206539686] [planner_server]: Destroying bond',
    '[vehicle_sim-1] ',
    '[vehicle_sim-1] Thread 0x00007fc441432540 (most recent call first):',
    '[vehicle_sim-1]   File "/w/site-packages/rclpy/node.py", line 1965 in destroy_node',
    '[vehicle_sim-1]   File "/w/build/wheelsim/wheelsim/ros/seam.py", line 185 in destroy',
    '[vehicle_sim-1]   File "/w/build/wheelsim/wheelsim/ros/node_main.py", line 158 in _run',
    '[vehicle_sim-1]   File "/w/build/wheelsim/wheelsim/ros/node_main.py", line 106 in run_node',
    "[ERROR] [vehicle_sim-1]: process has died [pid 26553, exit code 1, cmd '/w/vehicle_sim'].",
    '[INFO] [localization-2]: process has finished cleanly [pid 26555]', ''])


def test_a_known_teardown_hang_passes_with_a_warning_and_any_other_death_fails():
    with pytest.warns(UserWarning, match='hung in rclpy'):
        assert launched_node_stopped_cleanly('vehicle_sim', TEARDOWN_HANG_OUTPUT)
    assert launched_node_stopped_cleanly('localization', TEARDOWN_HANG_OUTPUT)
    elsewhere = TEARDOWN_HANG_OUTPUT.replace('in destroy_node', 'in spin_once')
    assert not launched_node_stopped_cleanly('vehicle_sim', elsewhere)
    crashed = TEARDOWN_HANG_OUTPUT.replace('exit code 1', 'exit code -11')
    assert not launched_node_stopped_cleanly('vehicle_sim', crashed)
    assert not launched_node_stopped_cleanly('controller', TEARDOWN_HANG_OUTPUT)
