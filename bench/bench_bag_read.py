"""Reading a run's bag back for its metrics: message by message (as ``load_run`` did before
issue 20's sweep work) vs ``load_run`` now (numeric fields read column-wise, joint states and
tracking errors decoded only when the plots ask), side by side on one bag.

Run after ``source env.sh``:  python bench/bench_bag_read.py [RUN_FOLDER] [--repeat 5]

RUN_FOLDER: a ``wheelsim run`` output folder (default: a new run of the built-in default
scenario, 90 s simulated, in a temporary folder). Printed: the median wall time [s] of

- ``per message``: every message of the topics ``load_run`` reads decoded one by one by the
  ``rosbags`` type store (``mcap_ros2`` where it cannot), the arrays built from the objects;
- ``load_run``: :func:`wheelsim.report.bag_data.load_run` (what a sweep point reads);
- ``load_run + plots data``: the same, and the joint states and tracking errors (what the
  plots need on top);
- ``mcap only``: iterating over the bag's records without decoding (the floor of both);
- ``metrics``: :func:`wheelsim.report.metrics.compute_metrics` on the loaded run, for scale.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def per_message(bag: Path) -> None:
    from mcap.reader import make_reader

    from wheelsim.report import bag_data

    decoders = bag_data._Decoders()
    wanted = {'/' + name for name in bag_data.TOPICS}
    with bag_data._bag_file(bag).open('rb') as stream:
        decoded = [(decoders.decode(schema, channel.message_encoding, message.data),
                    message.log_time)
                   for schema, channel, message in make_reader(stream).iter_messages(
                       log_time_order=False) if channel.topic in wanted]
    bag_data._array(bag_data._stamp_s(m, t) for m, t in decoded)


def mcap_only(bag: Path) -> None:
    from mcap.reader import make_reader

    from wheelsim.report import bag_data

    with bag_data._bag_file(bag).open('rb') as stream:
        for _ in make_reader(stream).iter_messages(log_time_order=False):
            pass


def load_run(bag: Path, plots_data: bool = False) -> None:
    from wheelsim.report import bag_data

    run = bag_data.load_run(bag)
    if plots_data:
        assert len(run.joints.t_s) and len(run.tracking_error.t_s)


def metrics_of(run) -> None:
    from wheelsim.report import metrics

    metrics.compute_metrics(run)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('run', nargs='?', type=Path, help='a wheelsim run output folder')
    parser.add_argument('--repeat', type=int, default=5, help='timed repetitions (default 5)')
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix='bench_bag_read_') as tmp:
        run_dir = args.run
        if run_dir is None:
            subprocess.run(['wheelsim', 'run', '--quiet', '--no-plots', '--output', tmp],
                           check=True, capture_output=True)
            run_dir = Path(tmp) / 'default'
        bag = run_dir / 'bag'
        print(f'{bag}: {sum(p.stat().st_size for p in bag.glob("*.mcap")) / 1e6:.1f} MB, '
              f'load average {os.getloadavg()[0]:.1f}; median of {args.repeat} [s]')
        from wheelsim.report.bag_data import load_run as load

        loaded = load(bag)
        for label, read, argument in (
                ('per message', per_message, bag), ('load_run', load_run, bag),
                ('load_run + plots data', lambda b: load_run(b, True), bag),
                ('mcap only', mcap_only, bag), ('metrics', metrics_of, loaded)):
            read(argument)  # warm up: imports, type store
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                read(argument)
                times.append(time.perf_counter() - start)
            print(f'  {label:22s} {statistics.median(times):6.3f}')


if __name__ == '__main__':
    main()
