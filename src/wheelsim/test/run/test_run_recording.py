"""The recorder writes bags (through BagFile): the schemas the middleware knows, the messages as
recorded, the run's distribution and publishers' QoS in metadata.yaml."""

import os

import pytest
import yaml
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import (
    PoseStamped,
    PoseWithCovariance,
    PoseWithCovarianceStamped,
    TransformStamped,
    Twist,
    TwistStamped,
)
from mcap.reader import make_reader
from nav_msgs.msg import OccupancyGrid, Odometry, Path
from rclpy.qos import DurabilityPolicy, QoSProfile
from rclpy.serialization import deserialize_message
from rosbags.highlevel import AnyReader
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState, LaserScan
from std_msgs.msg import Empty, String
from tf2_msgs.msg import TFMessage

from wheelsim.ros.distro import ros_distro
from wheelsim.run import recording
from wheelsim.run.recording import BagRecorder, RecordingError, distro_types, ros_type_name

#: A message of every type a run records, and others.
MESSAGES = {
    '/odom': Odometry(child_frame_id='base_link'),
    '/tf': TFMessage(transforms=[TransformStamped(child_frame_id='odom')]),
    '/joint_states': JointState(name=['left', 'right'], position=[1.0, 2.0], velocity=[3.0, 4.0]),
    '/pose': PoseWithCovarianceStamped(),
    '/cmd_vel': Twist(),
    '/cmd_vel_stamped': TwistStamped(),
    '/plan': Path(poses=[PoseStamped(), PoseStamped()]),
    '/scan': LaserScan(ranges=[1.0, 2.5], angle_increment=0.125),
    '/map': OccupancyGrid(data=[0, 100, -1]),
    '/clock': Clock(clock=Time(sec=3)),
    '/diagnostics': DiagnosticArray(status=[DiagnosticStatus(
        name='a', values=[KeyValue(key='k', value='v')])]),
    '/robot_description': String(data='<robot/>'),
    '/empty': Empty(),
}


def record_all(bag, offered_qos=None) -> None:
    with BagRecorder(bag, offered_qos=offered_qos) as recorder:
        for time_ns, (topic, msg) in enumerate(MESSAGES.items(), start=1):
            recorder.record(topic, msg, time_ns)
            recorder.record('/rosout', msg, time_ns)  # never recorded


def test_every_schema_hash_is_the_one_the_middleware_reports(tmp_path, probe):
    """The bag's type hashes (rosbags' definitions of the run's distribution) against those
    rclpy's middleware gives each type's publishers."""
    record_all(tmp_path / 'bag')
    metadata = yaml.safe_load((tmp_path / 'bag' / 'metadata.yaml').read_text())
    in_bag = {entry['topic_metadata']['name']: entry['topic_metadata']['type_description_hash']
              for entry in metadata['rosbag2_bagfile_information']['topics_with_message_count']}
    assert set(in_bag) == set(MESSAGES)
    for topic, msg in MESSAGES.items():
        probe.publisher(type(msg), topic)
        info, = probe.node.get_publishers_info_by_topic(topic)
        assert in_bag[topic] == str(info.topic_type_hash), topic


def test_schemas_come_from_the_installed_msg_files_else_from_rosbags_store(tmp_path, monkeypatch,
                                                                         request):
    """With the installation's ``.msg`` files, every type is read from them (the hashes are
    checked against the middleware's above); without, rosbags' built-in definitions."""
    request.addfinalizer(recording.installed_types.cache_clear)
    for installed in (True, False):
        recording.installed_types.cache_clear()
        if not installed:
            monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path))
        bag = tmp_path / f'bag_{installed}'
        record_all(bag)
        with next(bag.glob('*.mcap')).open('rb') as stream:
            schemas = {schema.name: schema.data.decode()
                       for schema, _, _ in make_reader(stream).iter_messages()}
        assert len(schemas) == len(MESSAGES)
        read = recording.installed_types().fielddefs
        assert [name for name in schemas if (name in read) != installed] == []
        if not installed:
            for name, text in schemas.items():
                assert text == distro_types().generate_msgdef(name, ros_version=2)[0], name


def test_messages_read_back_as_recorded_by_every_reader(tmp_path):
    record_all(tmp_path / 'bag')
    with (tmp_path / 'bag' / 'bag.mcap').open('rb') as stream:
        read = [(channel.topic, schema.name, message.log_time, message.data)
                for schema, channel, message in make_reader(stream).iter_messages()]
    assert [(topic, name, time_ns) for topic, name, time_ns, _ in read] == [
        (topic, ros_type_name(msg), time_ns)
        for time_ns, (topic, msg) in enumerate(MESSAGES.items(), start=1)]
    for topic, _, _, data in read:
        msg = MESSAGES[topic]
        assert deserialize_message(data, type(msg)) == msg, topic
    with AnyReader([tmp_path / 'bag'], default_typestore=distro_types()) as reader:
        decoded = {connection.topic: reader.deserialize(data, connection.msgtype)
                   for connection, _, data in reader.messages()}
    assert decoded['/joint_states'].velocity.tolist() == [3.0, 4.0]
    assert decoded['/diagnostics'].status[0].values[0].value == 'v'


def test_metadata_names_the_distribution_and_the_publishers_qos(tmp_path):
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    record_all(tmp_path / 'bag', offered_qos={'/map': [latched], '/odom': [10]})
    info = yaml.safe_load((tmp_path / 'bag' / 'metadata.yaml').read_text())[
        'rosbag2_bagfile_information']
    assert info['ros_distro'] == ros_distro() == (
        os.environ.get('ROS_DISTRO') or os.environ['WHEELSIM_DISTRO'])
    assert info['message_count'] == len(MESSAGES)
    qos = {entry['topic_metadata']['name']: entry['topic_metadata']['offered_qos_profiles']
           for entry in info['topics_with_message_count']}
    assert [profile['durability'] for profile in qos['/map']] == ['transient_local']
    assert [(profile['reliability'], profile['durability']) for profile in qos['/odom']] == [
        ('reliable', 'volatile')]
    assert qos['/tf'] == []


def test_only_the_topics_asked_for_are_recorded(tmp_path):
    with BagRecorder(tmp_path / 'bag', topics={'/odom'}) as recorder:
        for topic, msg in MESSAGES.items():
            recorder.record(topic, msg, 5)
    with (tmp_path / 'bag' / 'bag.mcap').open('rb') as stream:
        assert [channel.topic for _, channel, _ in make_reader(stream).iter_messages()] == \
            ['/odom']


def test_an_existing_folder_is_refused_and_failures_name_the_bag(tmp_path):
    (tmp_path / 'kept').mkdir()
    with pytest.raises(FileExistsError, match='kept exists already'):
        BagRecorder(tmp_path / 'kept')
    (tmp_path / 'file').write_text('not a folder')
    with pytest.raises(RecordingError, match=r'writing the bag .*file/bag failed: '
                                             r'NotADirectoryError'):
        BagRecorder(tmp_path / 'file' / 'bag').__enter__()
    with BagRecorder(tmp_path / 'bag') as recorder:
        recorder.record('/odom', Odometry(), 1)
        with pytest.raises(RecordingError, match=r'writing the bag .*bag failed: ValueError: '
                                                 r'log time 18446744073709551616 ns'):
            recorder.record('/odom', Odometry(), 2**64)  # beyond a log time's 64 bits
    # the bag holds what came before
    with (tmp_path / 'bag' / 'bag.mcap').open('rb') as stream:
        assert [m.log_time for _, _, m in make_reader(stream).iter_messages()] == [1]


def test_a_malformed_message_is_the_publishers_error_not_the_bags(tmp_path):
    msg = Odometry(pose=PoseWithCovariance(check_fields=False))
    with BagRecorder(tmp_path / 'bag') as recorder:
        recorder.record('/odom', msg, 1)
        msg.pose.covariance = [0.0] * 35  # taken as it is without check_fields: cdr refuses it
        with pytest.raises(ValueError, match='pose.covariance: 35 items, not 36'):
            recorder.record('/odom', msg, 2)
    with next((tmp_path / 'bag').glob('*.mcap')).open('rb') as stream:
        assert len(list(make_reader(stream).iter_messages())) == 1


def test_an_unknown_distribution_is_left_empty_as_rosbag2_leaves_it(tmp_path, monkeypatch):
    monkeypatch.delenv('ROS_DISTRO', raising=False)
    monkeypatch.delenv('WHEELSIM_DISTRO', raising=False)
    record_all(tmp_path / 'bag')
    info = yaml.safe_load((tmp_path / 'bag' / 'metadata.yaml').read_text())
    assert info['rosbag2_bagfile_information']['ros_distro'] == ''


def graph_qos(profile) -> dict:
    """``profile`` (as the ROS graph reports it) as rosbag2's ``convert<rclpy::QoS>::encode``
    writes it at metadata version 9 (rosbag2_storage qos.cpp, Jazzy 0.26 and Kilted 0.32)."""
    def duration(value):
        seconds, nanoseconds = divmod(value.nanoseconds, 1_000_000_000)
        return {'sec': seconds, 'nsec': nanoseconds}

    return {'history': profile.history.name.lower(), 'depth': profile.depth,
            'reliability': profile.reliability.name.lower(),
            'durability': profile.durability.name.lower(),
            'deadline': duration(profile.deadline), 'lifespan': duration(profile.lifespan),
            'liveliness': profile.liveliness.name.lower(),
            'liveliness_lease_duration': duration(profile.liveliness_lease_duration),
            'avoid_ros_namespace_conventions': profile.avoid_ros_namespace_conventions}


# found in review: the bag held the profiles as created (keep_last, depth 10, zero durations,
# system_default liveliness), not as ros2 bag record writes them: as the ROS graph reports them
def test_a_publishers_qos_is_what_ros2_bag_record_writes_from_the_ros_graph(probe):
    from rclpy.duration import Duration
    from rclpy.qos import (
        HistoryPolicy,
        LivelinessPolicy,
        ReliabilityPolicy,
        qos_profile_sensor_data,
    )

    from wheelsim.ros import qos
    from wheelsim.run.recording import bag_qos

    profiles = {
        'default': qos.DEFAULT, 'latched': qos.LATCHED, 'tf': qos.TF, 'depth': 7,
        'sensor': qos_profile_sensor_data,
        'system': QoSProfile(depth=3, history=HistoryPolicy.SYSTEM_DEFAULT,
                             reliability=ReliabilityPolicy.SYSTEM_DEFAULT,
                             durability=DurabilityPolicy.SYSTEM_DEFAULT,
                             liveliness=LivelinessPolicy.SYSTEM_DEFAULT),
        'best_available': QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_AVAILABLE,
                                     durability=DurabilityPolicy.BEST_AVAILABLE,
                                     liveliness=LivelinessPolicy.BEST_AVAILABLE),
        'timed': QoSProfile(depth=1, history=HistoryPolicy.KEEP_ALL,
                            deadline=Duration(seconds=1, nanoseconds=5),
                            lifespan=Duration(seconds=2),
                            liveliness=LivelinessPolicy.MANUAL_BY_TOPIC,
                            liveliness_lease_duration=Duration(seconds=3))}
    for name, profile in profiles.items():
        probe.publisher(String, f'/qos_{name}', profile)
        info, = probe.node.get_publishers_info_by_topic(f'/qos_{name}')
        assert bag_qos(profile) == graph_qos(info.qos_profile), name
    assert bag_qos(qos.DEFAULT)['deadline'] == {'sec': 9223372036, 'nsec': 854775807}


FULL_DISK = """
import resource, signal, sys, traceback
from pathlib import Path
import numpy
from nav_msgs.msg import Odometry
from wheelsim.run.recording import BagRecorder, RecordingError
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write beyond the limit fails (EFBIG)
resource.setrlimit(resource.RLIMIT_FSIZE, (3_000_000, 3_000_000))
covariances = numpy.random.default_rng(1).random((20_000, 36))  # not compressed away
msg = Odometry()
try:
    with BagRecorder(Path(sys.argv[1])) as recorder:
        for time_ns in range(20_000):
            msg.pose.covariance = covariances[time_ns]
            recorder.record('/odom', msg, time_ns)
except RecordingError as err:
    chain = ''.join(traceback.format_exception(err))
    print(chain.count('RecordingError:'), err)
"""


def test_a_full_disk_is_reported_once_and_the_complete_chunks_stay_readable(tmp_path):
    """The write's error, not a second one from finishing the bag (found in review)."""
    import subprocess
    import sys

    from wheelsim.report.bag_data import load_run

    result = subprocess.run([sys.executable, '-c', FULL_DISK, str(tmp_path / 'bag')],
                            capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.startswith('1 writing the bag '), result.stdout + result.stderr
    assert 'File too large' in result.stdout and result.stdout.count('\n') == 1
    assert 1000 < load_run(tmp_path / 'bag').message_counts['/odom'] < 20_000
