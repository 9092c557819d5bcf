"""Thin ROS 2 glue shared by the wheelsim nodes; the numeric core never imports it.

- :mod:`.parameters`: declare :class:`wheelsim.core.params.ParamSpec` lists on a node with
  descriptors, keep a validated frozen config, validate and apply live changes, report typos.
- :mod:`.runner`: ``main()`` helper (clear one-line start-up errors, clean shutdown).
- :mod:`.qos`: the QoS profiles of the public interface.
- :mod:`.conversions`: messages <-> plain numbers (stamps, yaw, twists, poses).
- :mod:`.clock`: clock-mode selection and wall/steady timers independent of ``use_sim_time``.
- :mod:`.cmd_vel`: the ``cmd_vel`` input (Twist or TwistStamped, type detection, sanitising).
- :mod:`.diagnostics`: a small ``/diagnostics`` publisher.
- :mod:`.testing`: run nodes as separate processes over loopback DDS in tests and benchmarks.
"""
