"""Thin ROS 2 glue shared by the wheelsim nodes; imports the core, never a node.

For every node:

- :mod:`.seam`: the seam a node does all its middleware work through (publishers,
  subscriptions, timers, the ROS clock, parameters, logger); :class:`.seam.LiveSeam` is an rclpy
  node, the headless one is :class:`wheelsim.run.lockstep.LockstepSeam` (docs/architecture.md).
- :mod:`.parameters`: declare :class:`wheelsim.core.params.ParamSpec` lists on a node with
  descriptors, keep a validated frozen config, validate and apply live changes, report typos.
- :mod:`.node_main`: ``main()`` helper (one clear start-up error line, clean shutdown).
- :mod:`.shutdown`: a node process ends within a second of SIGINT or SIGTERM, at any moment.
- :mod:`.qos`: the QoS profiles of the public interface.
- :mod:`.conversions`: messages <-> plain numbers (stamps, yaw, twists, poses).
- :mod:`.inputs`: checks on received messages (frame names, finite poses), throttled warnings.
- :mod:`.clock`: clock modes, ROS-time change callbacks, steady timers, a wall-clock ticker thread.
- :mod:`.diagnostics`: a small ``/diagnostics`` publisher.
- :mod:`.dds_domain`: a reserved ``ROS_DOMAIN_ID`` per run or test, DDS kept on loopback.

For vehicle_sim: :mod:`.cmd_vel` (Twist or TwistStamped input, type detection, sanitising),
:mod:`.vehicle_outputs` (state publishers), :mod:`.sim_diagnostics` (its diagnostics).
:mod:`.cdr`: messages to CDR bytes, as rclpy serializes them, faster (vehicle_sim's publications
through the middleware, the headless run's bag).
"""
