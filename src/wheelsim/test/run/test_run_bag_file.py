"""BagFile writes what rosbags' Writer writes given the same messages, its chunks compressed with
zstd (rosbags' ``STORAGE`` compression, at rosbags' level): the MCAP file byte for byte,
metadata.yaml as text; and the readers read it back. At its own level (rosbag2's), the same
records in smaller chunks."""

from importlib.metadata import version

import numpy as np
import pytest
import yaml
from geometry_msgs.msg import PoseWithCovarianceStamped, TwistStamped
from mcap.reader import make_reader
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, qos_profile_sensor_data
from rclpy.serialization import deserialize_message
from rosbags.highlevel import AnyReader
from rosbags.interfaces import (
    Qos,
    QosDurability,
    QosHistory,
    QosLiveliness,
    QosReliability,
    QosTime,
)
from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from wheelsim.ros.cdr import serializer
from wheelsim.run.bag_file import CHUNK_SIZE_BYTES, ZSTD_LEVEL, BagFile, zstd
from wheelsim.run.recording import bag_qos, distro_types, ros_type_name, type_store

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def rosbags_qos(profile: QoSProfile) -> Qos:
    """rclpy's profile, as the bag holds it (:func:`bag_qos`), as rosbags' writer takes it."""
    held = bag_qos(profile)

    def duration(name):
        return QosTime(held[name]['sec'], held[name]['nsec'])

    return Qos(QosHistory[held['history'].upper()], held['depth'],
               QosReliability[held['reliability'].upper()],
               QosDurability[held['durability'].upper()], duration('deadline'),
               duration('lifespan'), QosLiveliness[held['liveliness'].upper()],
               duration('liveliness_lease_duration'), held['avoid_ros_namespace_conventions'])


def run_messages(count):
    """``count`` rounds of a run's topics, each its own publishers' QoS: (topic, message, log time
    [ns], profiles); a topic's first message comes late (its records in a later chunk)."""
    messages = [('/robot_description', String(data='<robot/>'), 1_000_000_000, [LATCHED])]
    for i in range(count):
        time_ns = 1_000_000_000 + 20_000_000 * i
        odom = Odometry(child_frame_id='base_link')
        odom.header.frame_id = 'odom'
        odom.pose.covariance = [float(i) for i in range(36)]
        odom.pose.pose.position.x = 0.01 * i
        messages.append(('/odom', odom, time_ns, [10]))
        messages.append(('/joint_states', JointState(name=['left', 'right'],
                                                     position=[i, -i], velocity=[1.0, 2.0]),
                         time_ns, [qos_profile_sensor_data, 10]))
        if i % 3 == 0:
            messages.append(('/cmd_vel', TwistStamped(), time_ns, []))
        if i >= count // 2:
            messages.append(('/pose', PoseWithCovarianceStamped(), time_ns + 1, [10]))
    return messages


def write_both(tmp_path, messages, distro='rosbags', zstd_level=zstd.COMPRESSION_LEVEL_DEFAULT):
    """The messages written by rosbags' Writer into ``a/bag`` (chunks compressed: zstd's default
    level) and by BagFile at ``zstd_level`` (by default rosbags') into ``b/bag``."""
    reference = Writer(tmp_path / 'a' / 'bag', version=9, storage_plugin=StoragePlugin.MCAP)
    reference.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
    reference.open()
    ours = BagFile(tmp_path / 'b' / 'bag', f'rosbags-{version("rosbags")}', distro, zstd_level)
    channels = {}
    for topic, msg, time_ns, profiles in messages:
        if topic not in channels:
            type_name = ros_type_name(msg)
            store = type_store(type_name)
            profiles = [p if isinstance(p, QoSProfile) else QoSProfile(depth=p)
                        for p in profiles]
            channels[topic] = (
                reference.add_connection(topic, type_name, typestore=store,
                                         offered_qos_profiles=[rosbags_qos(p) for p in profiles]),
                ours.add_channel(topic, type_name,
                                 store.generate_msgdef(type_name, ros_version=2)[0],
                                 store.hash_rihs01(type_name), [bag_qos(p) for p in profiles]),
                serializer(type(msg)))
        connection, channel_id, serialize = channels[topic]
        data = serialize(msg)
        reference.write(connection, time_ns, data)
        ours.write(channel_id, time_ns, data)
    reference.close()
    ours.close()
    return tmp_path / 'a' / 'bag', tmp_path / 'b' / 'bag'


def assert_same_bags(reference, ours):
    assert (ours / 'bag.mcap').read_bytes() == (reference / 'bag.mcap').read_bytes()
    assert (ours / 'metadata.yaml').read_text() == (reference / 'metadata.yaml').read_text()


def test_a_run_is_written_as_rosbags_writes_it_byte_for_byte(tmp_path):
    messages = run_messages(2000)
    reference, ours = write_both(tmp_path, messages)
    assert_same_bags(reference, ours)
    with (ours / 'bag.mcap').open('rb') as stream:
        reader = make_reader(stream)
        chunks = reader.get_summary().chunk_indexes
        read = [(channel.topic, message.log_time, message.data)
                for _, channel, message in reader.iter_messages(log_time_order=False)]
    assert len(chunks) >= 3  # several chunks, a topic's first records in a later one
    assert all(c.uncompressed_size <= CHUNK_SIZE_BYTES + 1000 for c in chunks)
    assert [(topic, time_ns) for topic, time_ns, _ in read] == [
        (topic, time_ns) for topic, _, time_ns, _ in messages]
    odom = [deserialize_message(data, Odometry) for topic, _, data in read if topic == '/odom']
    assert [m.pose.pose.position.x for m in odom] == pytest.approx([0.01 * i for i in range(2000)])
    with AnyReader([ours], default_typestore=distro_types()) as reader:
        counts = {c.topic: c.msgcount for c in reader.connections}
        assert sum(1 for _ in reader.messages()) == len(messages)
    assert counts == {'/robot_description': 1, '/odom': 2000, '/joint_states': 2000,
                      '/cmd_vel': 667, '/pose': 1000}


def chunks_and_messages(bag):
    """The chunk indexes of ``bag``'s MCAP file and its messages (topic, log time, data)."""
    with (bag / 'bag.mcap').open('rb') as stream:
        reader = make_reader(stream)
        return reader.get_summary().chunk_indexes, [
            (channel.topic, message.log_time, message.data)
            for _, channel, message in reader.iter_messages(log_time_order=False)]


def test_a_bag_is_compressed_at_rosbag2s_level_holding_the_same_records(tmp_path):
    """rosbag2's MCAP writer compresses at zstd level 1 (mcap's default): the same chunks of
    records as at rosbags' level, each several times smaller than its records."""
    assert ZSTD_LEVEL == 1 != zstd.COMPRESSION_LEVEL_DEFAULT
    reference, ours = write_both(tmp_path, run_messages(2000), zstd_level=ZSTD_LEVEL)
    chunks, read = chunks_and_messages(ours)
    reference_chunks, reference_read = chunks_and_messages(reference)
    assert read == reference_read
    assert [c.uncompressed_size for c in chunks] == [
        c.uncompressed_size for c in reference_chunks]
    assert {c.compression for c in chunks} == {'zstd'}
    assert all(c.compressed_size * 3 < c.uncompressed_size for c in chunks)
    assert [c.compressed_size for c in chunks] != [c.compressed_size for c in reference_chunks]


def test_unicode_names_are_written_as_rosbags_writes_them(tmp_path):
    messages = [(topic, String(data='déjà vu'), 1_000 + i, [10])
                for i, topic in enumerate(('/mesures_été', '/été/vitesse', '/x'))]
    assert_same_bags(*write_both(tmp_path / 'mesures_été', messages))
    info = (tmp_path / 'mesures_été' / 'b' / 'bag' / 'metadata.yaml').read_text(encoding='utf-8')
    assert 'name: /mesures_été' in info  # UTF-8, not escaped


def test_a_bag_without_messages_starts_at_0_as_the_mcap_specification_says(tmp_path):
    """Where rosbags writes 2**63 - 1 (a bag or a chunk without messages), the rest as it."""
    bag = BagFile(tmp_path / 'bag', 'wheelsim', 'jazzy')
    store = type_store('std_msgs/msg/String')
    bag.add_channel('/quiet', 'std_msgs/msg/String',
                    store.generate_msgdef('std_msgs/msg/String', ros_version=2)[0],
                    store.hash_rihs01('std_msgs/msg/String'), [])
    bag.close()
    with (tmp_path / 'bag' / 'bag.mcap').open('rb') as stream:
        summary = make_reader(stream).get_summary()
    assert summary.statistics.message_count == 0
    assert (summary.statistics.message_start_time, summary.statistics.message_end_time) == (0, 0)
    assert [(c.message_start_time, c.message_end_time) for c in summary.chunk_indexes] == [(0, 0)]
    assert [c.topic for c in summary.channels.values()] == ['/quiet']
    info = yaml.safe_load((tmp_path / 'bag' / 'metadata.yaml').read_text())[
        'rosbag2_bagfile_information']
    assert info['starting_time'] == {'nanoseconds_since_epoch': 0}
    assert info['duration'] == {'nanoseconds': 0}
    with AnyReader([tmp_path / 'bag'], default_typestore=distro_types()) as reader:
        assert [c.topic for c in reader.connections] == ['/quiet']
        assert list(reader.messages()) == []


@pytest.mark.parametrize('times_ns', [[2**63, 2**64 - 1], [np.int64(5), np.int64(7)]])
def test_any_log_time_in_64_bits_is_the_bags_start_and_end(tmp_path, times_ns):
    """Times above 2**63 - 1 (rosbags kept that as the start), numpy integers (once refused by
    the metadata's YAML at close)."""
    bag = BagFile(tmp_path / 'bag', 'wheelsim', 'jazzy')
    store = type_store('std_msgs/msg/String')
    channel = bag.add_channel('/s', 'std_msgs/msg/String',
                              store.generate_msgdef('std_msgs/msg/String', ros_version=2)[0],
                              store.hash_rihs01('std_msgs/msg/String'), [])
    for time_ns in times_ns:
        bag.write(channel, time_ns, serializer(String)(String(data='x')))
    bag.close()
    with (tmp_path / 'bag' / 'bag.mcap').open('rb') as stream:
        reader = make_reader(stream)
        statistics = reader.get_summary().statistics
        assert [m.log_time for _, _, m in reader.iter_messages()] == [int(t) for t in times_ns]
    assert (statistics.message_start_time, statistics.message_end_time) == (
        int(times_ns[0]), int(times_ns[-1]))
    info = yaml.safe_load((tmp_path / 'bag' / 'metadata.yaml').read_text())[
        'rosbag2_bagfile_information']
    assert info['starting_time'] == {'nanoseconds_since_epoch': int(times_ns[0])}
    assert info['duration'] == {'nanoseconds': int(times_ns[-1]) - int(times_ns[0])}


def test_the_distribution_is_the_one_given(tmp_path):
    _, ours = write_both(tmp_path, run_messages(3), distro='kilted')
    info = yaml.safe_load((ours / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert info['ros_distro'] == 'kilted'
    with (ours / 'bag.mcap').open('rb') as stream:
        (metadata,) = list(make_reader(stream).iter_metadata())
    assert yaml.safe_load(metadata.metadata['serialized_metadata'])['ros_distro'] == 'kilted'


def test_a_bad_time_or_channel_is_refused_and_nothing_written(tmp_path):
    bag = BagFile(tmp_path / 'bag', 'wheelsim', 'jazzy')
    store = type_store('std_msgs/msg/String')
    channel = bag.add_channel('/s', 'std_msgs/msg/String',
                              store.generate_msgdef('std_msgs/msg/String', ros_version=2)[0],
                              store.hash_rihs01('std_msgs/msg/String'), [])
    data = serializer(String)(String(data='x'))
    bag.write(channel, 5, data)
    for time_ns in (-1, 2**64, 1.5, None):
        with pytest.raises(ValueError, match=rf'^log time {time_ns!r} ns: not an integer in '
                                             r'\[0, 2\*\*64\)$'):
            bag.write(channel, time_ns, data)
    for channel_id in (0, 2, 70_000):
        with pytest.raises(ValueError, match=rf'^channel {channel_id}: not added \(added: 1 to '
                                             r'1\)$'):
            bag.write(channel_id, 6, data)
    bag.close()
    with (tmp_path / 'bag' / 'bag.mcap').open('rb') as stream:
        assert [m.log_time for _, _, m in make_reader(stream).iter_messages()] == [5]


def test_an_existing_folder_is_refused(tmp_path):
    (tmp_path / 'bag').mkdir()
    with pytest.raises(FileExistsError):
        BagFile(tmp_path / 'bag', 'wheelsim', 'jazzy')
