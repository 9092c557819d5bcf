"""Thin ROS 2 glue shared by the wheelsim nodes; the numeric core never imports it.

For every node:

- :mod:`.parameters`: declare :class:`wheelsim.core.params.ParamSpec` lists on a node with
  descriptors, keep a validated frozen config, validate and apply live changes, report typos.
- :mod:`.runner`: ``main()`` helper (one clear start-up error line, clean shutdown).
- :mod:`.qos`: the QoS profiles of the public interface.
- :mod:`.conversions`: messages <-> plain numbers (stamps, yaw, twists, poses).
- :mod:`.clock`: clock modes, ROS-time change callbacks, steady timers, a wall-clock ticker thread.
- :mod:`.diagnostics`: a small ``/diagnostics`` publisher.
- :mod:`.processes`: run nodes as separate processes over loopback DDS in tests and benchmarks.

For vehicle_sim: :mod:`.cmd_vel` (Twist or TwistStamped input, type detection, sanitising),
:mod:`.vehicle_outputs` (state publishers), :mod:`.sim_diagnostics` (its diagnostics).
"""
