"""Check that two ``wheelsim run`` output folders hold the same results, bit for bit.

Run after ``source env.sh``:  python bench/compare_runs.py RUN_A RUN_B

RUN_A and RUN_B are run folders (``results/default``, say). Compared:

- ``metrics.json``: byte for byte;
- the bags: the same topics with the same types and message counts in ``metadata.yaml``, and the
  same messages in the same order in the MCAP file: topic, schema name, log time, publish time
  and serialized payload, byte for byte. Payload bytes that differ only in CDR alignment padding
  (which rclpy leaves uninitialised, e.g. after the frame id of ``sensor_msgs/JointState``) are
  counted apart and reported: the decoded messages are then compared instead.

Exit code 0 when everything is identical (padding differences allowed), 1 otherwise, with the
first differences printed. The bag writer's file layout (chunks, indexes, metadata sizes and
times) may differ: only the recorded content is compared.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

import yaml
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

MAX_REPORTED = 10


def bag_messages(bag_dir: Path) -> Iterator[tuple[str, str, int, int, bytes, object]]:
    """(topic, schema name, log time, publish time, payload, decode()) in file order."""
    (mcap_file,) = bag_dir.glob('*.mcap')
    decoders = DecoderFactory()
    with mcap_file.open('rb') as handle:
        reader = make_reader(handle)
        for schema, channel, message in reader.iter_messages(log_time_order=False):
            decoder = decoders.decoder_for(channel.message_encoding, schema)
            yield (channel.topic, schema.name, message.log_time, message.publish_time,
                   bytes(message.data), lambda d=decoder, m=message: d(m.data))


def topic_table(bag_dir: Path) -> list[tuple[str, str, int]]:
    """(topic, type, message count) of ``metadata.yaml``, sorted by topic."""
    info = yaml.safe_load((bag_dir / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    return sorted((t['topic_metadata']['name'], t['topic_metadata']['type'], t['message_count'])
                  for t in info['topics_with_message_count'])


def compare(run_a: Path, run_b: Path) -> list[str]:
    """The differences between two run folders (empty: identical); prints a summary."""
    problems = []
    if (run_a / 'metrics.json').read_bytes() != (run_b / 'metrics.json').read_bytes():
        problems.append('metrics.json differs')
    table_a, table_b = topic_table(run_a / 'bag'), topic_table(run_b / 'bag')
    if table_a != table_b:
        problems.append(f'metadata.yaml topics differ: {table_a} != {table_b}')
    count = padding_only = 0
    a_messages, b_messages = bag_messages(run_a / 'bag'), bag_messages(run_b / 'bag')
    for index, (a, b) in enumerate(zip(a_messages, b_messages, strict=False)):
        count += 1
        if a[:4] != b[:4]:
            problems.append(f'message {index}: {a[:4]} != {b[:4]}')
        elif a[4] != b[4]:
            if len(a[4]) == len(b[4]) and repr(a[5]()) == repr(b[5]()):
                padding_only += 1
            else:
                problems.append(f'message {index} on {a[0]} at {a[2]} ns: payloads differ')
        if len(problems) >= MAX_REPORTED:
            break
    else:
        rest_a, rest_b = sum(1 for _ in a_messages), sum(1 for _ in b_messages)
        if rest_a or rest_b:
            problems.append(f'message counts differ: {count + rest_a} != {count + rest_b}')
    print(f'{run_a} vs {run_b}: {count} messages compared, {len(table_a)} topics, '
          f'{padding_only} differ only in alignment padding, {len(problems)} differences')
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('run_a', type=Path)
    parser.add_argument('run_b', type=Path)
    args = parser.parse_args()
    for run in (args.run_a, args.run_b):
        missing = [name for name in ('metrics.json', 'bag/metadata.yaml')
                   if not (run / name).is_file()]
        if missing:
            parser.error(f'{run}: not a run folder of wheelsim run (no {", ".join(missing)})')
    problems = compare(args.run_a, args.run_b)
    for problem in problems:
        print('  ' + problem)
    sys.exit(1 if problems else 0)


if __name__ == '__main__':
    main()
