"""Reading run bags into arrays (wheelsim.report.bag_data), and the bag builders the other
report tests use: small bags written with BagRecorder from rclpy message objects (no nodes)."""

import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from geometry_msgs.msg import (
    Point32,
    PolygonStamped,
    PoseStamped,
    PoseWithCovarianceStamped,
    TwistStamped,
    Vector3Stamped,
)
from mcap.reader import make_reader
from mcap.writer import Writer as McapWriter
from mcap_ros2.writer import Writer as McapRos2Writer
from nav_msgs.msg import Odometry
from nav_msgs.msg import Path as PathMsg
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

from wheelsim.core.world.footprint import Footprint
from wheelsim.report.bag_data import RunReader, load_run
from wheelsim.run.recording import BagRecorder, RecordingError

NS = 1_000_000_000


def ns(t_s: float) -> int:
    return round(t_s * NS)


def set_stamp(header, t_s: float) -> None:
    header.stamp.sec, header.stamp.nanosec = divmod(ns(t_s), NS)


def _set_pose(pose, x: float, y: float, yaw: float) -> None:
    pose.position.x, pose.position.y = float(x), float(y)
    pose.orientation.z, pose.orientation.w = math.sin(yaw / 2), math.cos(yaw / 2)


def odometry(t_s, x, y, yaw, vx=0.0, frame='map') -> Odometry:
    msg = Odometry()
    set_stamp(msg.header, t_s)
    msg.header.frame_id, msg.child_frame_id = frame, 'base_link'
    _set_pose(msg.pose.pose, x, y, yaw)
    msg.twist.twist.linear.x = float(vx)
    return msg


def pose_estimate(t_s, x, y, yaw) -> PoseWithCovarianceStamped:
    msg = PoseWithCovarianceStamped()
    set_stamp(msg.header, t_s)
    msg.header.frame_id = 'map'
    _set_pose(msg.pose.pose, x, y, yaw)
    return msg


def twist_stamped(t_s, vx=0.0, vy=0.0, wz=0.0) -> TwistStamped:
    msg = TwistStamped()
    set_stamp(msg.header, t_s)
    msg.twist.linear.x, msg.twist.linear.y, msg.twist.angular.z = float(vx), float(vy), float(wz)
    return msg


def plan(t_s, poses) -> PathMsg:
    """A nav_msgs/Path stamped ``t_s``; ``poses``: (planned time, x, y, yaw) tuples."""
    msg = PathMsg()
    set_stamp(msg.header, t_s)
    msg.header.frame_id = 'map'
    for t, x, y, yaw in poses:
        pose = PoseStamped()
        set_stamp(pose.header, t)
        pose.header.frame_id = 'map'
        _set_pose(pose.pose, x, y, yaw)
        msg.poses.append(pose)
    return msg


def write_bag(path: Path, records) -> Path:
    """Write (topic, message, log time [s]) records, in log-time order, into a new bag."""
    with BagRecorder(path) as recorder:
        for topic, msg, t_s in sorted(records, key=lambda r: r[2]):
            recorder.record(topic, msg, ns(t_s))
    return path


def straight_run(offset_m=0.1, delay_s=0.0, end_s=12.0, rate_hz=50):
    """Plan along +x at 1 m/s for 10 s (received at t=0); the vehicle drives it ``offset_m``
    to the left and ``delay_s`` late, stopping at the end."""
    records = [('/plan', plan(0.0, [(0.1 * i, 0.1 * i, 0.0, 0.0) for i in range(101)]), 0.0)]
    for t in np.arange(0, round(end_s * rate_hz) + 1) / rate_hz:
        x = min(max(t - delay_s, 0.0), 10.0)
        records.append(('/ground_truth', odometry(t, x, offset_m, 0.0), t))
    return records


def test_series_arrays_times_and_counts(tmp_path):
    records = straight_run(end_s=2.0)
    records.append(('/robot_description', String(data='<robot/>'), 0.0))
    run = load_run(write_bag(tmp_path / 'bag', records))
    assert run.message_counts == {'/ground_truth': 101, '/plan': 1, '/robot_description': 1}
    np.testing.assert_allclose(run.ground_truth.t_s, np.arange(101) / 50)
    np.testing.assert_allclose(run.ground_truth.y_m, 0.1)
    assert run.plan is run.plans[0]
    np.testing.assert_allclose(run.plan.poses.t_s[-1], 10.0)
    assert (run.start_time_s, run.end_time_s) == (0.0, 2.0)


def test_yaw_from_quaternion_over_the_circle(tmp_path):
    yaws = np.linspace(-3.1, 3.1, 13)
    records = [('/pose', pose_estimate(0.1 * i, 0, 0, yaw), 0.1 * i) for i, yaw in enumerate(yaws)]
    run = load_run(write_bag(tmp_path / 'bag', records))
    np.testing.assert_allclose(run.estimate.yaw_rad, yaws, atol=1e-12)


@pytest.mark.parametrize('stamped', [True, False], ids=['TwistStamped', 'Twist'])
def test_cmd_vel_of_either_type(tmp_path, stamped):
    """TwistStamped takes its header stamp, Twist its log time."""
    records = []
    for i in range(5):
        msg = twist_stamped(0.1 * i, vx=0.5, wz=-0.2)
        records.append(('/cmd_vel', msg if stamped else msg.twist, 0.1 * i + (0.01 if stamped
                                                                            else 0.0)))
    run = load_run(write_bag(tmp_path / 'bag', records))
    np.testing.assert_allclose(run.cmd_vel.t_s, 0.1 * np.arange(5))
    np.testing.assert_allclose(run.cmd_vel.vx_mps, 0.5)
    np.testing.assert_allclose(run.cmd_vel.wz_radps, -0.2)


def test_joint_states_wheels_and_steering(tmp_path):
    """Found in review: a steered wheel's rolling joint (``steered_left_wheel_joint``, as
    wheelsim's car names it) was drawn as a steering angle."""
    names = ['front_left_steer_joint', 'rear_left_wheel_joint', 'steered_right_wheel_joint']
    records = []
    for i in range(3):
        msg = JointState(name=names, position=[0.1 * i, 1.0 * i, 2.0 * i], velocity=[])
        set_stamp(msg.header, 0.02 * i)
        records.append(('/joint_states', msg, 0.02 * i))
    wheels = JointState(name=names[1:], position=[5.0, 6.0], velocity=[3.0, 4.0])
    set_stamp(wheels.header, 0.06)
    records.append(('/joint_states', wheels, 0.06))
    joints = load_run(write_bag(tmp_path / 'bag', records)).joints
    assert joints.steering_names == ('front_left_steer_joint',)
    assert joints.wheel_names == ('rear_left_wheel_joint', 'steered_right_wheel_joint')
    np.testing.assert_allclose(joints.position[:, 0], [0.0, 0.1, 0.2, np.nan])
    np.testing.assert_allclose(joints.velocity[:, 2], [np.nan, np.nan, np.nan, 4.0])


def test_unknown_tracking_error_type_becomes_columns(tmp_path):
    """In memory too (found in review: rclpy's array.array gave no column there)."""
    records = [('/tracking_error', Float64MultiArray(data=[0.1 * i, -0.2, 3.0]), 0.5 * i)
               for i in range(4)]
    reader = RunReader()
    for topic, msg, t_s in records:
        reader.take(topic, msg, ns(t_s))
    for errors in (load_run(write_bag(tmp_path / 'bag', records)).tracking_error,
                   reader.run().tracking_error):
        assert list(errors.columns) == ['data[0]', 'data[1]', 'data[2]']
        np.testing.assert_allclose(errors.t_s, [0.0, 0.5, 1.0, 1.5])
        np.testing.assert_allclose(errors.columns['data[0]'], [0.0, 0.1, 0.2, 0.3])


def test_tracking_errors_read_in_memory_are_those_read_from_the_bag(tmp_path):
    """Found in review: read from rclpy's objects in memory (every wheelsim run), the columns
    were the private slots, header stamps included (``_header._stamp._nanosec``)."""
    records = []
    for i in range(3):
        msg = Vector3Stamped()
        set_stamp(msg.header, 0.05 * i)
        msg.vector.x, msg.vector.y, msg.vector.z = 0.1 * i, -0.2, 0.3
        records.append(('/tracking_error', msg, 0.05 * i))
    reader = RunReader()
    for topic, msg, t_s in records:
        reader.take(topic, msg, ns(t_s))
    in_memory = reader.run().tracking_error
    from_bag = load_run(write_bag(tmp_path / 'bag', records)).tracking_error
    assert list(in_memory.columns) == list(from_bag.columns) == ['vector.x', 'vector.y',
                                                                 'vector.z']
    for name in in_memory.columns:
        np.testing.assert_array_equal(in_memory.columns[name], from_bag.columns[name])
    np.testing.assert_allclose(in_memory.columns['vector.x'], [0.0, 0.1, 0.2])


def test_namespace_selects_the_robot(tmp_path):
    records = [('/robot1/ground_truth', odometry(0.0, 1.0, 2.0, 0.0), 0.0),
               ('/ground_truth', odometry(0.0, 9.0, 9.0, 0.0), 0.0)]
    bag = write_bag(tmp_path / 'bag', records)
    np.testing.assert_allclose(load_run(bag, namespace='/robot1').ground_truth.x_m, [1.0])
    np.testing.assert_allclose(load_run(bag).ground_truth.x_m, [9.0])


def test_empty_bag_gives_empty_series(tmp_path):
    run = load_run(write_bag(tmp_path / 'bag', []))
    assert len(run.ground_truth) == len(run.cmd_vel) == len(run.joints.t_s) == 0
    assert run.plans == () and run.plan is None and not run.tracking_error.columns
    assert run.message_counts == {} and run.end_time_s == 0.0


def test_mcap_file_path_also_accepted(tmp_path):
    bag = write_bag(tmp_path / 'bag', straight_run(end_s=0.1))
    assert len(load_run(next(bag.glob('*.mcap'))).ground_truth) == 6


def test_folder_without_mcap_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match='no .mcap file'):
        load_run(tmp_path)


# found in review: a file that was no MCAP file (metrics.json given) gave empty series and every
# metric null; a bag ros2 bag record split into several files was read from its first file only
def test_a_file_that_is_not_mcap_is_a_clear_error(tmp_path):
    for text in (b'hello', b'{"cross_track_rms_m": 0.1}'):
        (tmp_path / 'metrics.json').write_bytes(text)
        with pytest.raises(ValueError, match=r'metrics\.json: not an MCAP file'):
            load_run(tmp_path / 'metrics.json')
    (tmp_path / 'cut.mcap').write_bytes(b'\x89MCA')  # its writer killed within the magic
    assert load_run(tmp_path / 'cut.mcap').message_counts == {}


def test_every_file_of_a_split_bag_is_read_in_the_order_of_its_numbers(tmp_path):
    """As ``ros2 bag record --max-bag-size`` splits a bag: ``bag_0.mcap`` ... ``bag_10.mcap``,
    each with schema ids of its own (here one file's Odometry id is the next one's
    TwistStamped's)."""
    parts = [[('/ground_truth', odometry(0.1 * i, 0.1 * i, 0.0, 0.0), 0.1 * i),
              ('/cmd_vel', twist_stamped(0.1 * i, vx=float(i)), 0.1 * i)] for i in range(11)]
    for i in (1, 3, 10):  # the second and last files: cmd_vel first
        parts[i].reverse()
    for i, records in enumerate(parts):  # the footprint read is the last file's
        footprint = PolygonStamped()
        footprint.polygon.points = [Point32(x=0.1 * (i + 1) * sx, y=0.1 * sy)
                                    for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
        records.append(('/footprint', footprint, 0.1 * i))
    split = tmp_path / 'split'
    split.mkdir()
    for i, records in enumerate(parts):
        part = write_bag(tmp_path / f'part{i}', records)
        next(part.glob('*.mcap')).rename(split / f'bag_{i}.mcap')
    run = load_run(split)
    np.testing.assert_allclose(run.ground_truth.x_m, 0.1 * np.arange(11))
    np.testing.assert_allclose(run.cmd_vel.vx_mps, np.arange(11.0))
    assert run.message_counts == {'/cmd_vel': 11, '/footprint': 11, '/ground_truth': 11}
    np.testing.assert_allclose(run.footprint.corners, Footprint.from_flat(
        [1.1, 0.1, -1.1, 0.1, -1.1, -0.1, 1.1, -0.1]).corners, rtol=1e-6)  # 32-bit floats


def test_recorder_keeps_what_a_reused_message_held_when_recorded(tmp_path):
    # Publishers fill one message object again for every publication: each record must keep
    # the values of its moment.
    msg = odometry(0.0, 0.0, 0.0, 0.0)
    count = 2500
    with BagRecorder(tmp_path / 'bag') as recorder:
        for i in range(count):
            set_stamp(msg.header, 0.01 * i)
            msg.pose.pose.position.x = 0.01 * i
            recorder.record('/ground_truth', msg, ns(0.01 * i))
    run = load_run(tmp_path / 'bag')
    assert run.message_counts == {'/ground_truth': count}
    np.testing.assert_allclose(run.ground_truth.t_s, 0.01 * np.arange(count))
    np.testing.assert_allclose(run.ground_truth.x_m, 0.01 * np.arange(count))


def test_types_the_rosbags_store_does_not_know_are_decoded_from_the_bag_schema(tmp_path):
    # A tracking error of a custom type (not in the type store), written by another tool.
    with (tmp_path / 'errors.mcap').open('wb') as stream:
        writer = McapRos2Writer(stream)
        schema = writer.register_msgdef('my_msgs/msg/Errors', 'float64 along\nfloat64 cross')
        for i in range(3):
            writer.write_message('/tracking_error', schema, {'along': 0.5 * i, 'cross': -1.0},
                                 log_time=ns(0.1 * i))
        writer.finish()
    errors = load_run(tmp_path / 'errors.mcap').tracking_error
    assert list(errors.columns) == ['along', 'cross']
    np.testing.assert_allclose(errors.columns['along'], [0.0, 0.5, 1.0])
    np.testing.assert_allclose(errors.t_s, [0.0, 0.1, 0.2])


def test_recorder_reports_a_bag_it_cannot_finish(tmp_path):
    recorder = BagRecorder(tmp_path / 'bag')
    with pytest.raises(RecordingError, match='writing the bag .*bag failed: FileNotFoundError'):
        with recorder:
            recorder.record('/ground_truth', odometry(0.0, 0.0, 0.0, 0.0), 0)
            shutil.rmtree(tmp_path / 'bag')  # its folder vanished: metadata.yaml cannot be written


def test_recorder_names_a_type_it_cannot_write(tmp_path):
    # A type neither installed nor in rosbags' store: the error names the bag and the type.
    recorder = BagRecorder(tmp_path / 'bag')
    unknown = type('Unknown', (), {'__module__': 'my_msgs.msg._unknown'})()
    with pytest.raises(RecordingError, match='writing the bag .* failed: .*my_msgs/msg/Unknown'):
        with recorder:
            recorder.record('/ground_truth', odometry(0.0, 0.0, 0.0, 0.0), 0)
            recorder.record('/b', unknown, 1)
    assert load_run(tmp_path / 'bag').message_counts == {'/ground_truth': 1}  # closed, readable


def record_and_read(bag: Path, records) -> RunReader:
    """Record ``(topic, msg, log time [s])`` into ``bag`` and give each to a reader as the
    lock-step runner does: the reader takes the message when it is recorded."""
    reader = RunReader()
    with BagRecorder(bag) as recorder:
        for topic, msg, t_s in records:
            recorder.record(topic, msg, ns(t_s))
            reader.take(topic, msg, ns(t_s))
    return reader


def test_run_reader_given_the_messages_in_memory_equals_reading_the_bag(tmp_path):
    records = straight_run(end_s=3.0, delay_s=0.2)
    records += [('/robot_description', String(data='<robot/>'), 0.5),
                ('/cmd_vel', twist_stamped(1.0, 0.5, 0.2), 1.0),
                ('/joint_states', JointState(name=['w'], position=[1.0], velocity=[2.0]), 1.2)]
    reader = record_and_read(tmp_path / 'bag', sorted(records, key=lambda r: r[2]))
    given, read = reader.run(), load_run(tmp_path / 'bag')
    assert given.message_counts == read.message_counts
    assert (given.start_time_s, given.end_time_s) == (read.start_time_s, read.end_time_s) == (0, 3)
    for series in ('ground_truth', 'cmd_vel'):
        for name, column in vars(getattr(read, series)).items():
            np.testing.assert_array_equal(getattr(getattr(given, series), name), column, series)
    np.testing.assert_array_equal(given.joints.velocity, read.joints.velocity)
    assert len(given.ground_truth) == 151
    np.testing.assert_array_equal(given.plan.poses.x_m, read.plan.poses.x_m)


def test_without_plots_the_topics_only_plots_draw_are_counted_not_read():
    reader = RunReader(plots=False)
    for topic, msg, t_s in straight_run(end_s=1.0) + [
            ('/joint_states', JointState(name=['w'], position=[1.0], velocity=[2.0]), 0.5),
            ('/tracking_error', Vector3Stamped(), 0.5)]:
        reader.take(topic, msg, ns(t_s))
    run = reader.run()
    assert run.message_counts['/joint_states'] == run.message_counts['/tracking_error'] == 1
    assert len(run.joints.t_s) == len(run.tracking_error.t_s) == 0
    assert len(run.ground_truth) == 51
    assert not reader.reads('/joint_states') and RunReader().reads('/joint_states')


def test_run_reader_reads_a_message_when_taken_though_its_object_is_filled_again(tmp_path):
    # A publisher may fill the same object for its next message: the reader keeps the values
    # it had when taken, as the bag does.
    msg = odometry(0.0, 0.0, 0.0, 0.0)
    count = 1007  # enough refills to catch a shared object; not a round number

    def refilled():
        for i in range(count):
            set_stamp(msg.header, 0.01 * (count - i))  # stamps falling: sorted by the reader
            msg.pose.pose.position.x = 0.01 * i
            yield '/ground_truth' if i % 3 else '/odom', msg, 0.01 * i

    reader = record_and_read(tmp_path / 'bag', refilled())
    given, read = reader.run(), load_run(tmp_path / 'bag')
    assert given.message_counts == read.message_counts == {
        '/ground_truth': count - (count + 2) // 3, '/odom': (count + 2) // 3}
    assert (given.start_time_s, given.end_time_s) == (read.start_time_s, read.end_time_s)
    for series in ('ground_truth', 'odom'):
        for name, column in vars(getattr(read, series)).items():
            np.testing.assert_array_equal(getattr(getattr(given, series), name), column, series)
    assert len(given.odom) == (count + 2) // 3
    assert len(set(given.ground_truth.x_m)) == len(given.ground_truth)


def test_messages_without_a_schema_are_only_counted(tmp_path):
    write_bag(tmp_path / 'bag', [('/odom', odometry(0.1 * i, i, 0.0, 0.0), 0.1 * i)
                                 for i in range(3)])
    with next((tmp_path / 'bag').glob('*.mcap')).open('rb') as stream:
        recorded = [(schema, message) for schema, _, message in
                    make_reader(stream).iter_messages()]
    schema = recorded[0][0]
    with (tmp_path / 'mixed.mcap').open('wb') as stream:
        writer = McapWriter(stream)
        writer.start()
        schema_id = writer.register_schema(schema.name, schema.encoding, schema.data)
        channels = [writer.register_channel('/odom', 'cdr', schema_id),
                    writer.register_channel('/odom', 'cdr', 0)]  # schemaless
        for i, (_, message) in enumerate(recorded):
            writer.add_message(channels[i % 2], message.log_time, message.data,
                               message.publish_time)
        writer.finish()
    run = load_run(tmp_path / 'mixed.mcap')
    assert run.message_counts == {'/odom': 3}
    np.testing.assert_array_equal(run.odom.x_m, [0.0, 2.0])  # the schemaless message left out
    assert (run.start_time_s, run.end_time_s) == (0.0, 0.2)


def test_a_bag_whose_writer_was_killed_gives_its_complete_chunks(tmp_path):
    # A process killed outright leaves the MCAP file without its summary, possibly in the
    # middle of a chunk: the messages of the chunks before are still read.
    count = 4000  # about 2.9 MB of records: two complete 1 MiB chunks, then the pending one
    msg = odometry(0.0, 0.0, 0.0, 0.0)
    covariances = np.random.default_rng(1).random((count, 36))  # not compressed away
    with BagRecorder(tmp_path / 'bag') as recorder:
        for i in range(count):
            set_stamp(msg.header, 0.01 * i)
            msg.pose.covariance = covariances[i]
            recorder.record('/ground_truth', msg, ns(0.01 * i))
    mcap_file = next((tmp_path / 'bag').glob('*.mcap'))
    whole = mcap_file.read_bytes()
    with mcap_file.open('rb') as stream:
        chunks = make_reader(stream).get_summary().chunk_indexes
    assert len(chunks) == 3
    inside_third_chunk = chunks[2].chunk_start_offset + chunks[2].chunk_length // 2
    for cut, complete in ((len(whole) - 100, True), (inside_third_chunk, False)):  # summary
        mcap_file.write_bytes(whole[:cut])
        run = load_run(tmp_path / 'bag')
        read = run.message_counts['/ground_truth']
        assert read == count if complete else 1000 < read < count
        np.testing.assert_allclose(run.ground_truth.t_s, 0.01 * np.arange(read))
    # Killed before its first chunk reached the file (still in the writer's buffer: empty), in
    # the header, inside the first chunk, or garbage after it: no messages, no error.
    for content in (b'', whole[:20], whole[:5000], whole[:5000] + bytes(range(256)) * 40):
        mcap_file.write_bytes(content)
        assert load_run(tmp_path / 'bag').message_counts == {}


def test_recorder_refuses_an_existing_folder(tmp_path):
    with pytest.raises(FileExistsError, match='exists already'):
        BagRecorder(tmp_path)
