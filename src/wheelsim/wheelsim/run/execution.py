"""Many runs on Ray: each run is a Ray task on long-lived worker processes.

A worker process imports wheelsim, the nodes and their message classes once, then runs one
scenario after another in-process (:func:`wheelsim.run.runner.run_scenario`: lock-step, no rclpy
context, no DDS, no ROS domain, so the runs of one machine cannot hear each other). Locally
(the default) ``ray.init`` starts a private Ray instance with ``workers`` CPUs (the machine's
cores unless told; Ray's usage statistics off unless ``RAY_USAGE_STATS_ENABLED`` says otherwise,
its token authentication on unless :data:`AUTH_MODE` says otherwise) whose every service (GCS,
raylet, agents, the workers' and the driver's gRPC servers) listens on 127.0.0.1 only
(:data:`SINGLE_NODE_SWITCH`) and whose workers run at the command's own niceness
(:data:`WORKER_NICENESS`); with ``address`` (``auto``, ``ray://host:10001``
or ``host:6379``) the runs go to that cluster, whose nodes need the same wheelsim installed
(docs/ray_cluster.md).

Output: a worker that sees the output folder (same machine or a shared file system: it finds
the token file the driver wrote there) writes the run there; any other worker runs into a
temporary folder and returns the run's files, which the driver writes into the output.
At most ``workers`` runs are in flight, so an interrupted sweep loses at most that many runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import signal
import socket
import tempfile
import threading
import time
import traceback
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from wheelsim.run.held_signals import HeldSignals
from wheelsim.run.output import ERROR_FILE
from wheelsim.run.scenario import Scenario, ScenarioError

TOKEN_FILE = '.wheelsim-output-token'
LOOPBACK = '127.0.0.1'
"""The address of a local Ray instance: it serves this machine only."""
CONNECT_TIMEOUT_S = 10.0
"""How long ``--address HOST:PORT`` may take to accept a connection before it is an error."""
SINGLE_NODE_SWITCH = 'RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER'
"""Set to ``0`` before Ray is imported, Ray takes this machine for a single-node one (as on
Windows and macOS): it keeps the node address 127.0.0.1 instead of replacing it with the
machine's network address (Ray 2.60 ``ray/_private/services.py``,
``resolve_ip_for_localhost`` and ``get_node_ip_address``), so its gRPC servers and agents bind
to 127.0.0.1. Read once, when ``ray`` is imported; it also makes ``ray start`` refuse to join
another node, so it is set for a local instance only."""
WORKER_NICENESS = 'RAY_worker_niceness'
"""Ray's setting (read by the raylet it starts) of how much each worker adds to the niceness it
inherits (``nice()`` at the end of the worker's start; Ray 2.60 ``core_worker.cc``), 15 unless
set: on a busy machine such workers get a small share of a core (about 1/30 of one beside a
process at niceness 0), so a sweep crawls while anything else runs. A local instance sets it to
0, so its workers keep the command's own niceness (``nice wheelsim sweep ...`` still lowers
them); a value set in the environment is kept."""
AUTH_MODE = 'RAY_AUTH_MODE'
"""Ray's authentication setting. A local instance sets it to ``token`` unless it is set: the
mode Ray 2.59 and later choose for a local instance anyway (a token made in
``~/.ray/auth_token`` if there is none), asked for explicitly, so Ray does not print its notice
that it chose it on every command; ``disabled`` in the environment is kept."""
DRIVER_FAILURE_HANDLER_SWITCH = 'RAY_DISABLE_FAILURE_SIGNAL_HANDLER'
"""Ray's setting, read once when ``ray`` is imported (``ray_constants``), whether its core worker
leaves out Abseil's failure signal handler, which prints a C++ stack on a crash. Installed, it
takes SIGTERM over in ``ray.init`` and resets SIGTERM to the default action part way into
``ray.shutdown`` (Ray 2.60: 0.04-0.25 s into its 1.1-1.6 s), so a SIGTERM then ends the command
at once, with no tables. It is set to 1 for the command's own import of Ray only and taken away
again before Ray starts, so the workers keep the handler. A value set in the environment is
kept: ``1`` (or ``true``) takes the handler from the workers too, any other brings that SIGTERM
reset back."""
ADDRESS = re.compile(r'(ray://)?([^\s:\[\]]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})')
"""A cluster address, ``[ray://]HOST:PORT`` (HOST a name, an IPv4 address or an IPv6 one in
brackets); ``auto`` is the other form accepted."""
WAIT_S = 0.2
"""How often the driver looks up from waiting (Ctrl-C is handled between two looks)."""


@dataclass(frozen=True)
class Job:
    """One run: ``key`` names its folder in the output (:func:`job_key`); ``record_bag``
    false: no bag, only what the metrics read in memory (faster; a sweep's or a study's
    default)."""

    key: str
    scenario: Scenario
    record_bag: bool = False

    @property
    def writes_bag(self) -> bool:
        """Whether the run writes a bag: asked to, and its scenario records a topic."""
        return self.record_bag and self.scenario.record_topics != ()


def job_key(scenario: Scenario) -> str:
    """A short hash of everything that makes the run what it is (the scenario with its
    overrides and seed): equal keys, equal runs, so a rerun can skip them."""
    fields = asdict(scenario)
    del fields['params_file_replaced']  # what the params file said, not what runs
    del fields['params_file']  # its values are in node_parameters
    del fields['nodes_given'], fields['overridden']  # where the values came from
    if scenario.source is not None:  # the file, however its path is written
        fields['source'] = scenario.source.resolve()
    text = json.dumps(fields, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob('*') if p.is_file()}


def run_job(job: Job, root: str, token: str) -> dict[str, Any]:
    """Run ``job`` in this process into ``root/<key>/<scenario name>/`` (see the module doc).

    Returns ``metrics``, ``failed`` (criteria), ``interrupted``, ``run_dir`` (relative to root),
    ``wall_s``, ``worker`` (``host:process id`` of this worker), and ``files`` when the output
    folder is not visible here (``root/<key>`` then holds only this attempt's files: an
    earlier one's are removed first); or ``error`` (one line) and ``error_file`` (relative to root:
    the traceback, ``<key>/<scenario name>/error.txt`` beside the bag so far when the run had
    started, else ``<key>/error.txt``) when the run raised. :meth:`RayRunner.run` gives a job
    whose worker died ``error`` alone.
    """
    from wheelsim.run.runner import RunError, run_scenario

    token_path = Path(root) / TOKEN_FILE
    shared = token_path.is_file() and token_path.read_text() == token
    target = Path(root) if shared else Path(tempfile.mkdtemp(prefix='wheelsim-run-'))
    shutil.rmtree(target / job.key, ignore_errors=True)  # an earlier attempt's files
    start = time.perf_counter()
    try:
        outcome = run_scenario(job.scenario, target / job.key, show_progress=False,
                               make_plots=False, overwrite=True, record=job.record_bag)
        result: dict[str, Any] = {
            'metrics': outcome.metrics, 'failed': list(outcome.failed_criteria),
            'interrupted': outcome.interrupted,
            'run_dir': str(outcome.output_dir.relative_to(target.resolve()))}
    except RunError as err:  # its traceback is in the run folder
        result = {'error': str(err),
                  'error_file': str(err.traceback_path.resolve().relative_to(target.resolve()))}
    except Exception as err:  # noqa: BLE001 - any failure of one run is reported, the rest go on
        (target / job.key).mkdir(parents=True, exist_ok=True)
        (target / job.key / ERROR_FILE).write_text(traceback.format_exc())
        result = {'error': f'{type(err).__name__}: {err}'.splitlines()[0],
                  'error_file': f'{job.key}/{ERROR_FILE}'}
    result['wall_s'] = time.perf_counter() - start
    result['worker'] = f'{socket.gethostname()}:{os.getpid()}'
    if not shared:
        result['files'] = _files(target)
        shutil.rmtree(target, ignore_errors=True)
    return result


def _on_loopback(address: str) -> bool:
    """Whether a cluster ``address`` (``host:port`` or ``ray://host:port``) is this machine's
    loopback interface, which Ray would replace by the machine's network address unless
    :data:`SINGLE_NODE_SWITCH` is 0 (as for the one-machine cluster of docs/ray_cluster.md)."""
    host = address.removeprefix('ray://').rpartition(':')[0]
    return host in (LOOPBACK, 'localhost', '[::1]')


def check_address(address: str) -> None:
    """ScenarioError naming ``--address`` unless ``address`` is ``auto`` or
    ``[ray://]HOST:PORT`` (:data:`ADDRESS`) with PORT in [1, 65535]."""
    match = ADDRESS.fullmatch(address)
    if address != 'auto' and not (match and 1 <= int(match[3]) <= 65535):
        raise ScenarioError(f'--address {address!r}: expected auto, ray://HOST:PORT or HOST:PORT '
                            '(PORT in [1, 65535])')


def _check_reachable(address: str) -> None:
    """ScenarioError naming ``--address`` unless a TCP connection to its HOST:PORT opens within
    :data:`CONNECT_TIMEOUT_S` (``auto`` is not checked: Ray resolves it, failing at once without
    a cluster, but retrying for minutes the address a stopped cluster left in its temporary
    folder): ``ray.init`` retries an address where nothing listens for minutes (a review waited
    5 min)."""
    match = ADDRESS.fullmatch(address)
    if match is None:
        return
    host, port = match[2].strip('[]'), int(match[3])
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as err:  # refused, no route, a name that does not resolve, the time-out
        reason = err.strerror or str(err) or type(err).__name__
        raise ScenarioError(f'--address {address}: nothing answers at {host}:{port} '
                            f'({reason}): start the cluster there (ray start --head) or give '
                            'its address') from None


@contextlib.contextmanager
def _without_sigint() -> Iterator[None]:
    """SIGINT blocked in this thread for the block, so that the processes and threads it starts
    never take one: they inherit the block (the signal mask survives fork and exec). A Ctrl-C,
    which the terminal sends to the whole process group, then reaches this process alone, which
    ends them (``ray.shutdown``); taken by Ray's processes while ``ray.init`` started them, it
    left two of them running for good. SIGTERM is left unblocked: Ray's processes would inherit
    that too, and ``ray.shutdown`` ends each with a SIGTERM, waiting 1 s for one that does not
    end before it kills it (a shutdown of 1.4 s took 5.4 s)."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


class _WithoutThreadNotice(logging.Filter):
    """Leaves out Ray's warning that ``ray.init`` in a thread other than the main one sets no
    SIGTERM handler: :meth:`RayRunner._init_in_thread` runs it there for that."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith('SIGTERM handler is not set')


def _import_ray_without_driver_failure_handler() -> Any:
    """``import ray`` with :data:`DRIVER_FAILURE_HANDLER_SWITCH` set for this import only (it
    changes nothing where Ray was imported before)."""
    if DRIVER_FAILURE_HANDLER_SWITCH in os.environ:
        import ray
        return ray
    os.environ[DRIVER_FAILURE_HANDLER_SWITCH] = '1'
    try:
        import ray
    finally:
        del os.environ[DRIVER_FAILURE_HANDLER_SWITCH]
    return ray


def local_cpus() -> int:
    """The CPUs this process may run on (its affinity, where the system has one)."""
    if hasattr(os, 'sched_getaffinity'):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class RayStartError(RuntimeError):
    """A new local Ray instance did not start (Ray's own error, in one line)."""


class RayRunner:
    """A Ray instance for many runs (a context manager: ``ray.init`` ... ``ray.shutdown``).
    ``workers`` (1 to :func:`local_cpus` for a local instance) and ``address``
    (:func:`check_address`) are checked here, before anything starts: ScenarioError naming
    the option."""

    def __init__(self, workers: int | None = None, address: str | None = None) -> None:
        if workers is not None and workers < 1:
            raise ScenarioError(f'--workers {workers}: must be at least 1')
        if address is not None:
            check_address(address)
        elif workers is not None and workers > local_cpus():
            raise ScenarioError(f'--workers {workers}: at most {local_cpus()} here, the CPUs '
                                'this process may use (more runs at once only slow each other '
                                'down); a Ray cluster (--address) takes more')
        self._address = address
        self._requested = workers
        self.workers = 0
        self._ray_thread: threading.Thread | None = None  # a local instance's (_init_in_thread)
        self._ray_ended = threading.Event()

    def __enter__(self) -> RayRunner:
        os.environ.setdefault('RAY_USAGE_STATS_ENABLED', '0')  # nothing leaves the machine
        if not self._address or _on_loopback(self._address):
            os.environ[SINGLE_NODE_SWITCH] = '0'  # before Ray's first import
        if not self._address:  # a new local instance: its raylet reads this
            os.environ.setdefault(AUTH_MODE, 'token')
            increment = os.environ.setdefault(WORKER_NICENESS, '0')
            if not increment.strip().lstrip('+-').isdigit():  # Ray crashes (SIGSEGV) on it
                raise ScenarioError(f'{WORKER_NICENESS}={increment!r}: must be a whole number, '
                                    "what Ray adds to its workers' niceness (unset: 0)")
        ray = _import_ray_without_driver_failure_handler()

        sigterm = signal.getsignal(signal.SIGTERM)
        try:
            self._start(ray)
        except BaseException:
            self._shutdown(ray)
            raise
        finally:
            # ray.init in the main thread (a cluster's) takes SIGTERM over (its handler exits
            # 15): the caller's handling again (the CLI's: as Ctrl-C), where it can be set
            if threading.current_thread() is threading.main_thread() and sigterm is not None:
                signal.signal(signal.SIGTERM, sigterm)
        self._task = ray.remote(num_cpus=1, max_retries=0)(run_job)
        return self

    def _start(self, ray: Any) -> None:
        """``ray.init``: the cluster at the address, or a new local instance on the loopback
        (:meth:`_init_in_thread`)."""
        if self._address:
            _check_reachable(self._address)
            try:
                ray.init(address=self._address, logging_level=logging.WARNING,
                         log_to_driver=False)
            except ConnectionError as err:  # an OSError, which the CLI would call a disk error
                raise ScenarioError(f'--address {self._address}: no Ray cluster reached: '
                                    f'{err}') from None
            cluster_cpus = int(ray.cluster_resources().get('CPU', 1))
            self.workers = min(self._requested or cluster_cpus, cluster_cpus)
        else:
            self.workers = self._requested or local_cpus()
            # The workers inherit this environment (ROS, loopback DDS, domain range).
            # address='local': a new private instance, never a cluster that `ray start` left
            # running on this machine (which ray.init() without an address would join).
            try:
                self._init_in_thread(ray, address='local', num_cpus=self.workers,
                                     include_dashboard=False, _node_ip_address=LOOPBACK,
                                     logging_level=logging.WARNING, log_to_driver=False)
            except Exception as err:  # noqa: BLE001 - Ray raises a bare Exception on time-outs
                # found in CI on an overloaded host: "The current node timed out during
                # startup" (Ray waits 30 s for its raylet) ended the command with a traceback
                reason = ' '.join(str(err).split()) or type(err).__name__
                raise RayStartError(f"Ray's local instance did not start: {reason}") from err
            node_address = ray.util.get_node_ip_address()
            if node_address != LOOPBACK:  # Ray was imported before the switch was set
                raise RuntimeError(
                    f'the local Ray instance would listen on {node_address}, not only on '
                    f'{LOOPBACK}: Ray was imported before {SINGLE_NODE_SWITCH}=0 was set (set it '
                    'in the environment, or start the sweep in a new process)')

    def __exit__(self, *exc: object) -> None:
        """``ray.shutdown``, which a signal may cut short: a caller with work left after it
        (the CLI's tables) holds signals over it (:class:`~wheelsim.run.held_signals.HeldSignals`;
        SIGTERM too, provided this runner imported Ray first:
        :data:`DRIVER_FAILURE_HANDLER_SWITCH`)."""
        import ray

        self._shutdown(ray)

    def _init_in_thread(self, ray: Any, **options: Any) -> None:
        """``ray.init(**options)`` for a new local instance, in a thread of its own (with SIGINT
        blocked: :func:`_without_sigint`) that this one waits for holding Ctrl-C and SIGTERM
        (:class:`~wheelsim.run.held_signals.HeldSignals`: handed to their handlers, the CLI's
        raise KeyboardInterrupt, once ``ray.init`` has returned or raised; its error is raised
        after them). In the main thread ``ray.init`` sets a SIGTERM handler of its own
        (``sys.exit``), which a SIGTERM then ran at whatever line ``ray.init`` was on: the
        command ended with exit 15 and no word, before ``ray.init`` had made the node that
        ``ray.shutdown`` ends, so the agents the raylet had started were left running. In
        another thread it sets none. The thread lives until :meth:`_shutdown`: the kernel ends
        the processes it started when it ends (Ray has them killed when their parent ends, and
        the parent that counts is the thread that started them)."""
        failure: list[BaseException] = []
        returned = threading.Event()
        self._ray_ended = threading.Event()

        def start() -> None:
            try:
                with _without_sigint():
                    ray.init(**options)
            except BaseException as err:  # noqa: BLE001 - raised in the waiting thread
                failure.append(err)
            returned.set()
            self._ray_ended.wait()

        notice = _WithoutThreadNotice()  # on the logger of ray.init (Ray 2.60)
        logging.getLogger('ray._private.worker').addFilter(notice)
        try:
            with HeldSignals():
                # daemon: a caller that ends without __exit__ is not held up by it (Ray's
                # atexit handler shuts the instance down)
                self._ray_thread = threading.Thread(target=start, name='ray.init', daemon=True)
                self._ray_thread.start()
                returned.wait()
        finally:
            logging.getLogger('ray._private.worker').removeFilter(notice)
        if failure:
            raise failure[0]

    def _shutdown(self, ray: Any) -> None:
        """``ray.shutdown``, then the end of the thread that started the local instance."""
        ray.shutdown()
        self._ray_ended.set()
        if self._ray_thread is not None:
            self._ray_thread.join()
            self._ray_thread = None

    def run(self, jobs: Iterable[Job | None], root: Path
            ) -> Iterator[tuple[Job, dict[str, Any]]]:
        """Run ``jobs``, yielding ``(job, result)`` as each finishes (see :func:`run_job`; a
        worker that died gives an ``error`` result). A job is taken from ``jobs`` only when a
        worker is free, so a generator can choose the next run from the results so far; it
        gives None to start nothing until the next result (asked again then; with nothing in
        flight, that ends the run). On
        KeyboardInterrupt the interrupt goes on and the runs in flight are left to Ray, which
        ends a job's workers when its driver disconnects (``ray.shutdown``). They are not
        cancelled: a force-cancelled task whose reply was already on its way aborted Ray's core
        worker with "Tried to complete task that was not pending" (Kilted CI, when Ctrl-C still
        reached the workers)."""
        import ray

        root = root.resolve()  # workers do not share the driver's working folder
        root.mkdir(parents=True, exist_ok=True)
        token = uuid.uuid4().hex
        (root / TOKEN_FILE).write_text(token)
        waiting = iter(jobs)
        in_flight: dict[Any, Job] = {}
        while True:
            while len(in_flight) < self.workers:  # pulled only when a worker is free
                job = next(waiting, None)  # (also None: the end of jobs)
                if job is None:
                    break
                in_flight[self._task.remote(job, str(root), token)] = job
            if not in_flight:
                return
            done, _ = ray.wait(list(in_flight), num_returns=1, timeout=WAIT_S)
            for ref in done:
                job = in_flight.pop(ref)
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayError as err:  # the worker died (crash, OOM)
                    result = {'error': f'{type(err).__name__}: {err}'.splitlines()[0]}
                if 'files' in result:
                    _write_files(root, job.key, result.pop('files'))
                yield job, result


def _write_files(root: Path, key: str, files: dict[str, bytes]) -> None:
    """Make ``root/<key>`` hold the files a worker returned (paths relative to ``root``, each
    under ``<key>/``) and nothing of an earlier attempt at the job."""
    shutil.rmtree(root / key, ignore_errors=True)
    for relative, data in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

