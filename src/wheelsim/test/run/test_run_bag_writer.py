"""The bag writer writes the bytes rosbags' own ``Writer.write`` writes, with the schemas of the
installed message definitions."""

import random

from mcap.reader import make_reader
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.enums import CompressionMode
from rosbags.typesys import Stores, get_typestore

from wheelsim.run import bag_writer

TOPICS = {'/odom': 'nav_msgs/msg/Odometry', '/tf': 'tf2_msgs/msg/TFMessage',
          '/joint_states': 'sensor_msgs/msg/JointState'}


def messages(count: int) -> list[tuple[str, int, bytes]]:
    """(topic, log time [ns], payload): sizes up to 3 kB so that several 1 MiB chunks fill,
    times mostly rising with some going back (the writer must not assume an order)."""
    rng = random.Random(7)
    time_ns, result = 10**9, []
    for _ in range(count):
        time_ns += rng.randrange(-2_000_000, 20_000_000)
        result.append((rng.choice(list(TOPICS)), time_ns, rng.randbytes(rng.randrange(1, 3000))))
    return result


def write(folder, batches, write_batch) -> tuple[bytes, str]:
    """Write ``batches`` with ``write_batch(writer, [(connection, time, data)])``; the MCAP
    file's bytes and metadata.yaml."""
    typestore = get_typestore(Stores.ROS2_KILTED)
    writer = Writer(folder / 'bag', version=9, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    connections = {topic: writer.add_connection(topic, name, typestore=typestore)
                   for topic, name in TOPICS.items()}
    for batch in batches:
        write_batch(writer, [(connections[topic], t, data) for topic, t, data in batch])
    writer.close()
    bag = folder / 'bag'
    return (bag / 'bag.mcap').read_bytes(), (bag / 'metadata.yaml').read_text()


def one_by_one(writer, batch):
    for connection, time_ns, data in batch:
        writer.write(connection, time_ns, data)


def test_batches_give_the_bytes_of_rosbags_writer(tmp_path):
    all_messages = messages(3000)  # about 4.5 MB: four chunks closed, one pending at the end
    batches = [all_messages[i:i + 500] for i in range(0, len(all_messages), 500)]
    (tmp_path / 'a').mkdir()
    (tmp_path / 'b').mkdir()
    expected = write(tmp_path / 'a', batches, one_by_one)
    actual = write(tmp_path / 'b', batches, bag_writer.write_messages)
    assert len(expected[0]) > 4 * bag_writer._CHUNK_BYTES
    assert actual[1] == expected[1]
    assert actual[0] == expected[0]


def test_a_writer_without_the_storage_parts_is_written_message_by_message():
    written = []

    class OtherWriter:
        compression_mode = CompressionMode.NONE
        storage = object()

        def write(self, connection, time_ns, data):
            written.append((connection, time_ns, data))

    batch = [('c', 1, b'x'), ('c', 2, b'y')]
    bag_writer.write_messages(OtherWriter(), batch)
    assert written == batch


RECORDED_TYPES = ['nav_msgs/msg/Odometry', 'nav_msgs/msg/Path', 'tf2_msgs/msg/TFMessage',
                  'sensor_msgs/msg/JointState', 'geometry_msgs/msg/PoseWithCovarianceStamped',
                  'geometry_msgs/msg/PolygonStamped', 'geometry_msgs/msg/TwistStamped',
                  'geometry_msgs/msg/Vector3Stamped', 'std_msgs/msg/String',
                  'nav_msgs/msg/OccupancyGrid', 'sensor_msgs/msg/LaserScan',
                  'diagnostic_msgs/msg/DiagnosticArray',
                  'geometry_msgs/msg/PointStamped', 'rosgraph_msgs/msg/Clock', 'std_msgs/msg/Bool']


def test_installed_definitions_give_the_schemas_and_hashes_of_rosbags_store():
    """What a run records (the room scenarios add map, scan and collision): the installed
    definitions, nested types and sequences of them included, give rosbags' own text."""
    installed, built_in = get_typestore(Stores.EMPTY), get_typestore(Stores.ROS2_KILTED)
    for name in RECORDED_TYPES:
        assert bag_writer.add_installed_types(installed, name), name
        assert installed.generate_msgdef(name, ros_version=2) == \
            built_in.generate_msgdef(name, ros_version=2), name
        assert installed.hash_rihs01(name) == built_in.hash_rihs01(name), name
    assert 'geometry_msgs/msg/PoseStamped' in installed.fielddefs  # inside nav_msgs/Path


def test_types_without_an_installed_definition_come_from_rosbags_store(tmp_path, monkeypatch,
                                                                     request):
    installed = get_typestore(Stores.EMPTY)
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path))
    # The process's type stores may hold std_msgs/String already (another test recorded one):
    # this test starts with new ones, and leaves none built without the installation behind.
    bag_writer._typestore.cache_clear()
    request.addfinalizer(bag_writer._typestore.cache_clear)
    assert not bag_writer.add_installed_types(installed, 'std_msgs/msg/String')
    assert installed.fielddefs == get_typestore(Stores.EMPTY).fielddefs
    writer = bag_writer.McapBagWriter(tmp_path / 'bag')
    chatter = writer.add_topic('/chatter', 'std_msgs/msg/String')
    writer.write([(chatter, 5, b'\x00\x01\x00\x00\x01\x00\x00\x00\x00')])
    writer.close()
    assert 'std_msgs/msg/String' not in bag_writer._typestore(Stores.EMPTY).fielddefs
    (schema, _, message), = make_reader((tmp_path / 'bag' / 'bag.mcap').open('rb')).iter_messages()
    assert (schema.name, message.log_time) == ('std_msgs/msg/String', 5)
    assert schema.data.decode() == \
        get_typestore(Stores.ROS2_KILTED).generate_msgdef('std_msgs/msg/String', ros_version=2)[0]
