"""Recording figures: what recording one run costs, its messages replayed through BagRecorder.

Run after ``source env.sh``:  python bench/bench_recording.py [--runs 5] [--baseline REV]
[--bag BAG]

The messages of a recorded run (``--bag``: a run's ``bag`` folder; by default the built-in
default scenario is run once with this tree into a temporary folder) are read back as rclpy
message objects (rclpy's ``deserialize_message``) and given to ``BagRecorder.record`` and the
report's ``RunReader.take`` in their order with their log times, as ``wheelsim run``
does (the objects that exist before are frozen out of the garbage collector, as in the loop).
Each run is a fresh process, so what is built on first use counts as it does in a run. Times
are CPU seconds of the thread:

- ``record``: the replay's ``record`` and ``take`` calls (types built from the ``.msg`` files,
  serializers and layouts generated, messages serialized and written, read by the report's
  reader): what recording and the report add to the lock-step loop;
- ``close``: leaving the recorder (the last chunk, the summary, ``metadata.yaml``);
- ``report data``: ``RunReader.run`` after it (the report's series);
- ``record again``: a second replay in the same process, into a new bag (what a sweep worker's
  later runs pay: the types, serializers and layouts are built);
- ``serialize (cdr)`` and ``serialize (rclpy)``: every message serialized once more by the
  compiled serializer (``wheelsim.ros.cdr``, built; rclpy's bytes, the recorder's variant ends
  them where the data ends, at the same cost) and by rclpy's ``serialize_message``, the
  library's way: why the recorder keeps a compiler of its own;
- ``write (BagFile)`` and ``write (rosbags)``: the serialized messages written into a new bag
  (the topics added, the messages, the close) by the recorder's writer
  (``wheelsim.run.bag_file.BagFile``) and by rosbags' public ``Writer``, the library's way,
  whose file it writes byte for byte: why the recorder keeps a writer of its own.

The table ends with whether every replay of a tree wrote the same bag, byte for byte (the MCAP
file and ``metadata.yaml``), and with ``--baseline`` whether both trees did.
``--baseline REV`` also runs the code of REV (exported as ``bench_runner.py`` does), alternating
with the working tree's run by run, and prints both side by side with the ratio. The table gives
the best and the median of the runs (the best is the least disturbed by other processes).
For a count that does not depend on the machine's load, run a replay under valgrind
(``--tool=callgrind``).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_runner import alternated, baseline_tree, variant_codes

FIGURES = ('record', 'close', 'report data', 'record again', 'serialize (cdr)',
           'serialize (rclpy)', 'write (BagFile)', 'write (rosbags)')


def recorded_messages(bag: Path) -> list[tuple[str, object, int]]:
    """(topic, rclpy message, log time [ns]) of every message of ``bag``, in file order."""
    from mcap.reader import make_reader
    from rclpy.serialization import deserialize_message

    classes: dict[str, type] = {}
    messages = []
    with next(bag.glob('*.mcap')).open('rb') as stream:
        for schema, channel, message in make_reader(stream).iter_messages(log_time_order=False):
            if schema.name not in classes:
                package, _, name = schema.name.split('/')
                classes[schema.name] = getattr(importlib.import_module(f'{package}.msg'), name)
            messages.append((channel.topic, deserialize_message(message.data,
                                                                classes[schema.name]),
                             message.log_time))
    return messages


def replay(messages: list[tuple[str, object, int]], bag: Path) -> dict[str, float]:
    """Record ``messages`` into the new bag folder ``bag``; CPU seconds of the parts."""
    from wheelsim.report.bag_data import RunReader
    from wheelsim.run.recording import BagRecorder

    reader = RunReader()
    if hasattr(reader, 'take'):
        recorder, take = BagRecorder(bag), reader.take
    else:  # a baseline before the reader took messages in memory: it read the recorded bytes
        recorder, take = BagRecorder(bag, listener=reader.add), lambda *_: None
    with recorder:
        record = recorder.record
        start_s = time.thread_time()
        for topic, msg, time_ns in messages:
            record(topic, msg, time_ns)
            take(topic, msg, time_ns)
        recorded_s = time.thread_time()
    closed_s = time.thread_time()
    reader.run()
    return {'record': recorded_s - start_s, 'close': closed_s - recorded_s,
            'report data': time.thread_time() - closed_s}


def serializing(messages: list[tuple[str, object, int]]) -> dict[str, float]:
    """CPU seconds to serialize every message with the recorder's serializer and with rclpy's."""
    from rclpy.serialization import serialize_message

    try:
        from wheelsim.ros.cdr import serialize
    except ImportError:  # a baseline from before the encoder moved to ros/
        from wheelsim.run.cdr import serialize

    figures = {}
    for name, function in (('serialize (cdr)', serialize),
                           ('serialize (rclpy)', serialize_message)):
        start_s = time.thread_time()
        for _, msg, _ in messages:
            function(msg)
        figures[name] = time.thread_time() - start_s
    return figures


def writing(messages: list[tuple[str, object, int]], folder: Path) -> dict[str, float]:
    """CPU seconds to write every message, serialized beforehand, with its topic's schema into
    a new bag: by the recorder's writer (``BagFile``; NaN for a tree without it) and by rosbags'
    public ``Writer``, the library's way (the same file: test_run_bag_file.py)."""
    from rosbags.rosbag2 import StoragePlugin, Writer

    from wheelsim.ros.cdr import serializer
    from wheelsim.run.recording import ros_type_name, type_store

    topics = {}
    for topic, msg, _ in messages:
        if topic not in topics:
            type_name = ros_type_name(msg)
            store = type_store(type_name)
            topics[topic] = (type_name, store, store.generate_msgdef(type_name, ros_version=2)[0],
                             store.hash_rihs01(type_name))
    data = [(topic, serializer(type(msg), rmw_padding=False)(msg), time_ns)
            for topic, msg, time_ns in messages]
    figures = {'write (BagFile)': float('nan')}
    try:
        from wheelsim.run.bag_file import BagFile
    except ImportError:  # a baseline before it
        pass
    else:
        start_s = time.thread_time()
        bag = BagFile(folder / 'ours' / 'bag', 'wheelsim', 'jazzy')
        channels = {topic: bag.add_channel(topic, type_name, definition, type_hash, [])
                    for topic, (type_name, _, definition, type_hash) in topics.items()}
        for topic, payload, time_ns in data:
            bag.write(channels[topic], time_ns, payload)
        bag.close()
        figures['write (BagFile)'] = time.thread_time() - start_s
    start_s = time.thread_time()
    writer = Writer(folder / 'rosbags' / 'bag', version=9, storage_plugin=StoragePlugin.MCAP)
    writer.open()
    connections = {topic: writer.add_connection(topic, type_name, typestore=store)
                   for topic, (type_name, store, _, _) in topics.items()}
    for topic, payload, time_ns in data:
        writer.write(connections[topic], time_ns, payload)
    writer.close()
    figures['write (rosbags)'] = time.thread_time() - start_s
    return figures


def one_process(source: Path) -> dict:
    """Two replays of ``source``'s messages in this process; the figures, the bag's hash and
    whether both replays wrote the same bag."""
    messages = recorded_messages(source)
    gc.freeze()
    with tempfile.TemporaryDirectory(prefix='bench_recording_') as tmp:
        result = replay(messages, Path(tmp, 'first', source.name))
        again = replay(messages, Path(tmp, 'again', source.name))
        result['record again'] = again['record']
        bags = {hashlib.sha256(b''.join(
            Path(tmp, run, source.name, file.name).read_bytes()
            for file in (next(source.glob('*.mcap')), source / 'metadata.yaml'))).hexdigest()
            for run in ('first', 'again')}
        result['replays equal'] = len(bags) == 1
        result['bag'] = bags.pop()
    result.update(serializing(messages))
    with tempfile.TemporaryDirectory(prefix='bench_recording_') as tmp:
        result.update(writing(messages, Path(tmp)))
    return result


def spawn(source: Path, code: Path | None) -> dict:
    """One process, with the package in ``code`` first on the path if given."""
    env = dict(os.environ)
    if code is not None:
        env['PYTHONPATH'] = os.pathsep.join([str(code), env.get('PYTHONPATH', '')])
    result = subprocess.run([sys.executable, __file__, '--child', str(source)],
                            capture_output=True, text=True, check=False, env=env)
    if result.returncode != 0:
        raise SystemExit(f'replay failed:\n{result.stdout}\n{result.stderr}')
    return json.loads(result.stdout.strip().splitlines()[-1])


def default_run_bag(folder: Path) -> Path:
    """The bag of the built-in default scenario, run with this tree into ``folder``."""
    from wheelsim.cli import _load
    from wheelsim.run.runner import run_scenario

    scenario, _ = _load(None)
    return run_scenario(scenario, folder, show_progress=False, make_plots=False).output_dir / 'bag'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=5, help='fresh processes (default 5)')
    parser.add_argument('--baseline', metavar='REV',
                        help='also run the code of this git revision, alternating')
    parser.add_argument('--bag', type=Path, help="a run's bag folder (default: run one)")
    parser.add_argument('--child', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_process(Path(args.child))))
        return
    if args.bag is not None and not any(args.bag.glob('*.mcap')):
        parser.error(f'--bag {args.bag}: not a bag folder (no .mcap file in it); give a run\'s '
                     'bag folder, e.g. results/default/bag')
    with tempfile.TemporaryDirectory(prefix='bench_recording_run_') as tmp:
        source = args.bag or default_run_bag(Path(tmp))
        load_before = os.getloadavg()[0]
        with baseline_tree(args.baseline) as old_code:
            variants = variant_codes(args.baseline, old_code)
            runs = alternated(variants, args.runs, lambda code: spawn(source, code))
        load_after = os.getloadavg()[0]
    print(f'{source}: {args.runs} processes per variant'
          f'{" (alternating)" if len(variants) > 1 else ""}, load average {load_before:.1f} '
          f'before, {load_after:.1f} after ({os.cpu_count()} CPUs)')
    names = list(runs)
    print(f'  {"CPU s (best / median)":22s}' + ''.join(f'{name:>26s}' for name in names) +
          ('     after/before' if len(names) > 1 else ''))
    for figure in FIGURES:
        best = [min(r[figure] for r in runs[name]) for name in names]
        cells = ''.join(f'{b:12.4f} / {statistics.median(r[figure] for r in runs[name]):8.4f}'
                        for b, name in zip(best, names, strict=True))
        ratio = f'   {best[1] / best[0]:6.2f}x' if len(names) > 1 and best[0] else ''
        print(f'  {figure:22s}{cells}{ratio}')
    bags = {name: {r['bag'] for r in runs[name]} for name in names}
    for name in names:
        same = len(bags[name]) == 1 and all(r['replays equal'] for r in runs[name])
        print(f'  {name}: bags (MCAP file and metadata.yaml) of every replay '
              f'{"identical" if same else "DIFFERENT"}')
    if len(names) > 1:
        same = len(set.union(*bags.values())) == 1
        print('  the two trees\' bags: ' + ('identical' if same else
                                            'different (compare_runs.py compares the messages)'))


if __name__ == '__main__':
    main()
