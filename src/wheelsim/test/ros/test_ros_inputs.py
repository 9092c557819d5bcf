"""wheelsim.ros.inputs.MapPoses: a pose in the map frame comes out as composing it with the
identity would give it, bit for bit (signed zeros included); non-finite poses and poses beyond
+-1e9 m are dropped."""

import itertools
import math
import struct
import time

import rclpy
from geometry_msgs.msg import Pose

from wheelsim.core.geometry.se2 import compose_floats
from wheelsim.ros.conversions import pose2d
from wheelsim.ros.inputs import MapPoses
from wheelsim.ros.seam import LiveSeam

EDGE_VALUES = (0.0, -0.0, 5e-324, -5e-324, 1e-300, 2.5, -2.5, 1e9, -1e9)
EDGE_YAWS_RAD = (0.0, -0.0, 1e-300, 3.0, -3.0, math.pi, -math.pi)


def pose_message(x_m: float, y_m: float, yaw_rad: float) -> Pose:
    pose = Pose()
    pose.position.x, pose.position.y = x_m, y_m
    pose.orientation.z, pose.orientation.w = math.sin(0.5 * yaw_rad), math.cos(0.5 * yaw_rad)
    return pose


def bits(values) -> bytes:
    return struct.pack('<3d', *values)


def test_map_frame_poses_are_the_identity_composition_bit_for_bit(ros_domain_id):
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        poses = MapPoses(LiveSeam('map_poses', context=context), 'map')
        for frame_id in ('', 'map', '/map'):
            for x_m, y_m, yaw_rad in itertools.product(EDGE_VALUES, EDGE_VALUES, EDGE_YAWS_RAD):
                msg = pose_message(x_m, y_m, yaw_rad)
                expected = compose_floats((0.0, 0.0, 0.0), pose2d(msg))
                assert bits(poses.pose(msg, frame_id, 'pose')) == bits(expected), (
                    frame_id, x_m, y_m, yaw_rad)
                assert bits(poses.planar(*pose2d(msg), frame_id, 'pose')) == bits(expected)
        # -0.0 in, +0.0 out: what the composition gives, not the input as it is
        assert bits(poses.pose(pose_message(-0.0, -0.0, 0.0), 'map', 'pose')) == bits((0.0,) * 3)
        # Not finite, or finite but beyond +-1e9 m (squares overflow in the trackers' nearest-point
        # search: the fuzz test's 1e308 pose once made the controller publish -inf/NaN errors).
        for bad in ((math.nan, 0.0, 0.0), (0.0, math.inf, 0.0), (0.0, 0.0, math.nan),
                    (1e154, 0.0, 0.0), (0.0, -1e308, 0.0), (1.0000001e9, 0.0, 0.0)):
            assert poses.pose(pose_message(*bad), 'map', 'pose') is None
            assert poses.planar(*bad, 'map', 'pose') is None
        assert poses.planar(1.0, 2.0, 0.5, 'odom', 'pose') is None  # no transform to map
    finally:
        rclpy.try_shutdown(context=context)


def test_frames_and_poses_static_transforms_put_beyond_1e9_m_are_refused(ros_domain_id):
    """A frame the static transforms put beyond +-1e9 m of the map frame (or not finitely far,
    a chain overflowing) is refused, and so is a pose a transform moves beyond +-1e9 m."""
    from rclpy.executors import SingleThreadedExecutor
    from tf2_msgs.msg import TFMessage

    from wheelsim.ros.conversions import transform_stamped
    from wheelsim.ros.static_frames import STATIC_TF_QOS

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        seam = LiveSeam('map_poses', context=context)
        poses = MapPoses(seam, 'map')
        links = {'edge': ('map', 1e9), 'beyond': ('map', 1.0000001e9), 'far': ('map', -1e308),
                 'farther': ('far', -1e308), 'last': ('map', 0.0)}  # child: (parent, x [m])
        static = seam.rclpy_node.create_publisher(TFMessage, '/tf_static', STATIC_TF_QOS)
        static.publish(TFMessage(transforms=[transform_stamped(0, parent, child, (x_m, 0.0, 0.0))
                                             for child, (parent, x_m) in links.items()]))
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(seam.rclpy_node)
        deadline = time.monotonic() + 30
        while poses.map_T('last', 'pose') is None:  # every link came in the one message
            assert time.monotonic() < deadline, 'no /tf_static received'
            executor.spin_once(timeout_sec=0.1)
        assert poses.map_T('edge', 'pose') == (1e9, 0.0, 0.0)
        assert poses.planar(0.0, 0.0, 0.0, 'edge', 'pose') == (1e9, 0.0, 0.0)
        assert poses.planar(-1.0, 0.0, 0.0, 'edge', 'pose') == (1e9 - 1.0, 0.0, 0.0)
        assert poses.planar(1.0, 0.0, 0.0, 'edge', 'pose') is None  # 1e9 + 1 m in map
        for frame in ('beyond', 'far', 'farther'):  # 'farther': -inf
            assert poses.map_T(frame, 'pose') is None, frame
            assert poses.planar(0.0, 0.0, 0.0, frame, 'pose') is None, frame
    finally:
        rclpy.try_shutdown(context=context)


def test_a_frame_whose_static_transform_was_refused_is_named_with_the_reason(capsys):
    """Found in review: a NaN translation on /tf_static was dropped without a word, and a goal
    in that frame was refused as if no static transform had been published."""
    from tf2_msgs.msg import TFMessage

    from wheelsim.ros.conversions import transform_stamped
    from wheelsim.run.lockstep import Lockstep

    class Frames:
        name = 'frames'

        def __init__(self, seam):
            self.poses = MapPoses(seam, 'map')
            tilted = transform_stamped(0, 'map', 'tilted', (1.0, 0.0, 0.0))
            tilted.transform.rotation.x, tilted.transform.rotation.w = 0.6, 0.8
            seam.create_publisher(TFMessage, '/tf_static', 10).publish(TFMessage(transforms=[
                transform_stamped(0, 'map', 'badframe', (math.nan, 0.0, 0.0)), tilted,
                transform_stamped(0, 'map', 'good', (2.0, 0.0, 0.0))]))
            seam.create_timer(0.01, lambda: None)

    lockstep = Lockstep(start_time_ns=1)
    frames = lockstep.add(Frames, {})
    lockstep.run_until(10_000_000)
    assert frames.poses.map_T('good', 'goal_pose') == (2.0, 0.0, 0.0)
    # found in review: a plan in a frame joined to the map was refused as if none joined them
    assert not frames.poses.frame_matches('good', 'plan')
    assert ('plan ignored: its frame is "good", frames works in "map" (a static transform '
            'joins them, but a plan is taken in that frame only)') in capsys.readouterr().err
    for frame, why in (('badframe', 'is not finite'), ('tilted', 'tilts the plane'),
                       ('unknown', None)):
        assert frames.poses.map_T(frame, f'goal in {frame}') is None  # (warnings: per input)
        said = (f'/tf_static was ignored for it: its transform from "map" {why}' if why else
                'no static transform joins them')
        assert (f'goal in {frame} ignored: its frame is "{frame}", frames works in "map" '
                f'({said})' in capsys.readouterr().err), frame


def test_warnings_are_throttled_on_the_nodes_clock(capsys):
    """Found while testing replanning: the throttle ran on the wall clock, so a headless run's
    log lost a note that came within 1 s of wall time (hundreds of simulated seconds) of the
    last, and the lines a run logged depended on how fast the machine ran it. A period lets
    LINES_PER_PERIOD lines of a kind through (found in review: one a period hid a person's
    second bad goal within 5 s)."""
    from wheelsim.ros.inputs import INFO_PERIOD_S, LINES_PER_PERIOD, InputWarnings
    from wheelsim.run.lockstep import Lockstep

    class Noting:
        name = 'noting'

        def __init__(self, seam):
            self.seam = seam
            self.warnings = InputWarnings(seam)
            seam.create_timer(0.1, self._note)

        def _note(self):
            self.warnings.info('plan', f'note at {self.seam.now_ns()} ns')

    lockstep = Lockstep(start_time_ns=1_000_000_000)
    lockstep.add(Noting, {})
    lockstep.run_until(2_550_000_000)
    logged = [line for line in capsys.readouterr().err.splitlines() if 'note at' in line]
    assert (INFO_PERIOD_S, LINES_PER_PERIOD) == (1.0, 5)
    assert [line.split('note at ')[1] for line in logged] == [
        f'{t_ms}000000 ns' for t_ms in (1100, 1200, 1300, 1400, 1500, 2100, 2200, 2300, 2400,
                                        2500)]


def test_warnings_before_a_simulated_clock_starts_are_throttled_on_the_steady_clock(
        ros_domain_id, capfd):
    """Found in review: with use_sim_time and no /clock yet the node's time stands at 0, so
    after the first five lines of a kind the period never ended: a later dropped command was
    dropped without a word."""
    from rclpy.parameter import Parameter

    from wheelsim.ros.inputs import INFO_PERIOD_S, LINES_PER_PERIOD, InputWarnings

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        seam = LiveSeam('before_the_clock', context=context, parameter_overrides=[
            Parameter('use_sim_time', value=True)])
        assert seam.now_ns() == 0
        warnings = InputWarnings(seam)
        for i in range(LINES_PER_PERIOD + 2):
            warnings.info('command', f'dropped {i}')
        period_end = time.monotonic() + INFO_PERIOD_S
        while time.monotonic() <= period_end:  # the period is what is tested
            time.sleep(0.05)
        warnings.info('command', 'dropped later')
        logged = [line.split(']: ')[-1] for line in capfd.readouterr().err.splitlines()
                  if 'dropped' in line]
        assert logged == [f'dropped {i}' for i in range(LINES_PER_PERIOD)] + ['dropped later']
    finally:
        rclpy.try_shutdown(context=context)
