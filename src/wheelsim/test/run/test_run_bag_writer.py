"""The bag writer writes the bytes rosbags' own ``Writer.write`` writes, with the schemas of the
installed message definitions."""

import random
import struct

import pytest
from geometry_msgs.msg import Point32, Polygon, PolygonStamped
from mcap.reader import make_reader
from nav_msgs.msg import Odometry
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.enums import CompressionFormat, CompressionMode
from rosbags.typesys import Stores, get_typestore
from std_msgs.msg import Empty, String

from wheelsim.run import bag_writer, cdr, msg_definitions

TOPICS = {'/odom': 'nav_msgs/msg/Odometry', '/tf': 'tf2_msgs/msg/TFMessage',
          '/joint_states': 'sensor_msgs/msg/JointState', '/pose': 'geometry_msgs/msg/PoseStamped'}


def messages(count: int) -> list[tuple[str, int, bytes]]:
    """(topic, log time [ns], payload): sizes up to 3 kB so that several 1 MiB chunks fill, one
    of 1.5 MB (a chunk of its own), times mostly rising with some going back (the writer must
    not assume an order); /pose only from the middle on."""
    rng = random.Random(7)
    time_ns, result = 10**9, []
    for i in range(count):
        time_ns += rng.randrange(-2_000_000, 20_000_000)
        topics = list(TOPICS) if i > count // 2 else list(TOPICS)[:3]
        size = 1_500_000 if i == count // 3 else rng.randrange(1, 3000)
        result.append((rng.choice(topics), time_ns, rng.randbytes(size)))
    return result


def record(channel: int, time_ns: int, data: bytes) -> bytes:
    """The MCAP message record of ``data`` (MCAP specification: opcode 0x05, the length of what
    follows, channel id, sequence, log time, publish time, data)."""
    return struct.pack('<BQHIQQ', 0x05, 22 + len(data), channel, 0, time_ns, time_ns) + data


def batches_of(all_messages, size: int = 500) -> list[list[tuple[str, int, bytes]]]:
    return [all_messages[i:i + size] for i in range(0, len(all_messages), size)]


def write(folder, batches, write_batch, late_topic: str | None = None) -> tuple[bytes, str]:
    """Write ``batches`` with ``write_batch(writer, [(connection, time, data)])``, each topic
    added before the batch of its first message (as the recorder adds them: its schema and
    channel records go into the pending chunk), and ``late_topic`` added after the last one; the
    MCAP file's bytes and metadata.yaml."""
    typestore = get_typestore(Stores.ROS2_KILTED)
    writer = Writer(folder / 'bag', version=9, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    connections = {}
    for batch in batches:
        for topic, _, _ in batch:
            if topic not in connections:
                connections[topic] = writer.add_connection(topic, TOPICS[topic],
                                                           typestore=typestore)
        write_batch(writer, [(connections[topic], t, data) for topic, t, data in batch])
    if late_topic:
        writer.add_connection(late_topic, TOPICS[late_topic], typestore=typestore)
    write_batch(writer, None)  # the end
    writer.close()
    bag = folder / 'bag'
    return (bag / 'bag.mcap').read_bytes(), (bag / 'metadata.yaml').read_text()


def one_by_one(writer, batch):
    for connection, time_ns, data in batch or ():
        writer.write(connection, time_ns, data)


def in_chunks():
    """A batch writer with bag_writer's chunks."""
    chunks = None

    def write_batch(writer, batch):
        nonlocal chunks
        chunks = chunks or bag_writer._Chunks(writer)
        if batch is None:
            chunks.finish()
        else:
            chunks.write([(connection.id, time_ns, record(connection.id, time_ns, data))
                          for connection, time_ns, data in batch])
    return write_batch


@pytest.mark.parametrize('batch_size', [500, 1, 3001])
def test_batches_give_the_bytes_of_rosbags_writer(tmp_path, batch_size):
    batches = batches_of(messages(3000), batch_size)  # about 6 MB: chunks closed, one pending
    expected = write(tmp_path / 'a', batches, one_by_one)
    actual = write(tmp_path / 'b', batches, in_chunks())
    assert len(expected[0]) > 5 * bag_writer._CHUNK_BYTES
    assert actual[1] == expected[1]
    assert actual[0] == expected[0]


def test_a_last_chunk_of_schemas_only_and_an_empty_bag_as_rosbags_writes_them(tmp_path):
    batches = batches_of(messages(100)[:10])
    expected = write(tmp_path / 'a', batches, one_by_one, late_topic='/pose')
    actual = write(tmp_path / 'b', batches, in_chunks(), late_topic='/pose')
    assert actual == expected
    assert write(tmp_path / 'c', [], in_chunks()) == write(tmp_path / 'd', [], one_by_one)


def test_a_writer_without_the_parts_used_writes_message_by_message(tmp_path, monkeypatch):
    batches = batches_of(messages(1000))
    bags = []
    for usable in (True, False):
        monkeypatch.setattr(bag_writer._Chunks, 'usable',
                            staticmethod(lambda writer, usable=usable: usable))
        writer = bag_writer.McapBagWriter(tmp_path / str(usable) / 'bag')
        assert (writer._chunks is None) == (not usable)
        channels = {}
        for batch in batches:
            for topic, _, _ in batch:
                if topic not in channels:
                    channels[topic] = writer.add_topic(topic, TOPICS[topic]).id
            writer.write([(channels[topic], t, record(channels[topic], t, data))
                          for topic, t, data in batch])
        writer.close()
        bags.append((tmp_path / str(usable) / 'bag' / 'bag.mcap').read_bytes())
    assert bags[0] == bags[1]


def test_chunks_are_used_only_with_rosbags_uncompressed_mcap_writer(tmp_path):
    writer = Writer(tmp_path / 'a', version=9, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    assert bag_writer._Chunks.usable(writer)
    writer.storage.compression = 'zstd'
    assert not bag_writer._Chunks.usable(writer)
    writer.storage.compression = ''
    del writer.storage.chunks
    assert not bag_writer._Chunks.usable(writer)
    writer = Writer(tmp_path / 'b', version=9, storage_plugin=StoragePlugin.SQLITE3)
    writer.open()
    assert not bag_writer._Chunks.usable(writer)
    writer = Writer(tmp_path / 'c', version=9, storage_plugin=StoragePlugin.MCAP)
    writer.set_compression(CompressionMode.MESSAGE, CompressionFormat.ZSTD)
    writer.open()
    assert not bag_writer._Chunks.usable(writer)


def test_types_without_an_installed_definition_come_from_rosbags_store(tmp_path, monkeypatch,
                                                                     request):
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path))
    # The process's definitions may hold std_msgs/String already (another test recorded one):
    # this test starts without, and leaves none found without the installation behind.
    msg_definitions.installed_definition.cache_clear()
    request.addfinalizer(msg_definitions.installed_definition.cache_clear)
    writer = bag_writer.McapBagWriter(tmp_path / 'bag')
    chatter = writer.add_topic('/chatter', 'std_msgs/msg/String')
    writer.write([(chatter.id, 5, record(chatter.id, 5, b'\x00\x01\x00\x00\x01\x00\x00\x00\x00'))])
    writer.close()
    (schema, _, message), = make_reader((tmp_path / 'bag' / 'bag.mcap').open('rb')).iter_messages()
    assert (schema.name, message.log_time) == ('std_msgs/msg/String', 5)
    assert schema.data.decode() == \
        get_typestore(Stores.ROS2_KILTED).generate_msgdef('std_msgs/msg/String', ros_version=2)[0]


@pytest.mark.parametrize('msg', [
    Odometry(child_frame_id='base_link'), String(data='a text'), Empty(),
    PolygonStamped(polygon=Polygon(points=[Point32(x=1.0), Point32(y=2.0)])),
], ids=lambda msg: type(msg).__name__)
def test_a_message_record_is_the_mcap_record_of_the_messages_cdr(msg):
    """Packed in one call with the message (the CDR part as cdr.serialize gives it), or after
    rclpy's bytes for a type the compiler leaves to rclpy."""
    pack = bag_writer.record_serializer(type(msg))
    assert pack(msg, 3, 1_500_000_000) == record(3, 1_500_000_000, cdr.serialize(msg))
    assert pack(msg, 65535, 2**63 - 1)[bag_writer.MESSAGE_DATA_START:] == cdr.serialize(msg)


def test_a_type_left_to_rclpy_gets_its_record_around_rclpys_bytes(monkeypatch):
    monkeypatch.setattr(cdr, '_serializers', {})
    monkeypatch.setattr(cdr._Compiler, 'function', lambda self, cls: (_ for _ in ()).throw(
        cdr._Unsupported('test')))
    msg = String(data='no padding to differ')  # rclpy leaves padding bytes uninitialised
    pack = bag_writer.record_serializer(String)
    assert pack.__name__ == 'serialize' and pack is not cdr.serializer(String)
    assert pack(msg, 2, 7) == record(2, 7, bytes(cdr.serialize_message(msg)))


def test_a_publishers_qos_profile_as_the_bag_metadata_holds_it():
    from rclpy.duration import Duration
    from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
    from rosbags.interfaces import QosDurability, QosHistory, QosReliability, QosTime

    from wheelsim.run.recording import bag_qos

    sensor = bag_qos(qos_profile_sensor_data)
    assert (sensor.history, sensor.depth, sensor.reliability, sensor.durability) == (
        QosHistory.KEEP_LAST, 5, QosReliability.BEST_EFFORT, QosDurability.VOLATILE)
    depth = bag_qos(7)  # as rclpy takes a depth: keep last, reliable, volatile
    assert (depth.history, depth.depth, depth.reliability, depth.durability) == (
        QosHistory.KEEP_LAST, 7, QosReliability.RELIABLE, QosDurability.VOLATILE)
    timed = bag_qos(QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                               deadline=Duration(seconds=1, nanoseconds=500_000_000)))
    assert timed.deadline == QosTime(1, 500_000_000) and timed.lifespan == QosTime(0, 0)
