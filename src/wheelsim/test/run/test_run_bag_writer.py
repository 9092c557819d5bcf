"""The bag writer's batch path writes the bytes rosbags' own ``Writer.write`` writes."""

import random

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
