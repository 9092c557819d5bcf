"""What the bring-up tests read: the install layout setup.py produces, and launch files statically.

Launch files cannot run here (no ``launch`` package without a ROS install), so they are read as
Python syntax trees: which nodes they start, which installed files they name, which arguments they
declare and use, which wheelsim launch files they include with which arguments. Substitutions are
evaluated as far as they are static (constants, ``FindPackageShare``, ``PathJoinSubstitution``,
lists, ``LaunchConfiguration`` by its declared default, ``EnvironmentVariable('ROS_DISTRO')`` for
every supported distro); whatever is not static is reported, so the tests notice it. Where
launch and launch_ros exist (a ROS install, or ../shared/ros-launch), :class:`Launch` runs a
launch file as ``ros2 launch`` does, in a session of its own.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import setuptools
import yaml

from wheelsim.core.params import flatten
from wheelsim.core.vehicle.config import MODELS
from wheelsim.nodes import NAMES
from wheelsim.testing.processes import default_sigint, ending_with_this_process

REPO = Path(__file__).resolve().parents[1]
PACKAGE_DIR = REPO / 'src' / 'wheelsim'
LAUNCH_DIR = REPO / 'launch'
PARAMS_DIR = REPO / 'params'
SHARE = 'share/wheelsim/'
SUPPORTED_DISTROS = ('jazzy', 'kilted')
WHEELSIM_NODES = NAMES  # every node the package installs
#: Executables of other packages the launch files may start, and the apt package (without the
#: ``ros-<distro>-`` prefix) that brings each package into the Docker image.
EXTERNAL_EXECUTABLES = {
    ('robot_state_publisher', 'robot_state_publisher'): 'robot-state-publisher',
    ('rviz2', 'rviz2'): 'rviz2',
    ('plotjuggler', 'plotjuggler'): 'plotjuggler-ros',
    ('teleop_twist_keyboard', 'teleop_twist_keyboard'): 'teleop-twist-keyboard',
    ('joy', 'joy_node'): 'joy',
    ('tf2_ros', 'static_transform_publisher'): 'tf2-ros',
    ('nav2_map_server', 'map_server'): 'navigation2',
    ('nav2_lifecycle_manager', 'lifecycle_manager'): 'navigation2',
    ('nav2_controller', 'controller_server'): 'navigation2',
    ('nav2_planner', 'planner_server'): 'navigation2',
    ('nav2_behaviors', 'behavior_server'): 'navigation2',
    ('nav2_bt_navigator', 'bt_navigator'): 'navigation2',
}


# --- setup.py -------------------------------------------------------------------------------

def setup_kwargs() -> dict[str, Any]:
    """The keyword arguments setup.py passes to ``setup()``, as colcon runs it (cwd: package)."""
    captured: dict[str, Any] = {}
    original, cwd = setuptools.setup, Path.cwd()
    setuptools.setup = lambda **kwargs: captured.update(kwargs)
    try:
        os.chdir(PACKAGE_DIR)
        code = compile((PACKAGE_DIR / 'setup.py').read_text(), 'setup.py', 'exec')
        exec(code, {'__name__': '__main__', '__file__': str(PACKAGE_DIR / 'setup.py')})
    finally:
        setuptools.setup = original
        os.chdir(cwd)
    return captured


def console_scripts() -> set[str]:
    """Names of the executables setup.py declares."""
    scripts = setup_kwargs()['entry_points']['console_scripts']
    return {entry.split('=')[0].strip() for entry in scripts}


def installed_files() -> dict[str, Path]:
    """Install path (relative to the install prefix) -> source file, from setup.py data_files."""
    installed: dict[str, Path] = {}
    for directory, files in setup_kwargs()['data_files']:
        for name in files:
            source = (PACKAGE_DIR / name).resolve()
            installed[f'{directory}/{source.name}'] = source
    return installed


# --- launch files ---------------------------------------------------------------------------

@dataclass
class Argument:
    name: str
    defaults: list[str] | None  # None: not static
    description: str | None
    line: int


@dataclass
class NodeUse:
    package: str | None
    executable: str | None
    line: int


@dataclass
class Include:
    targets: list[str] | None  # share-relative paths of wheelsim files, None: not static
    arguments: list[str]
    line: int
    external: list[str] = field(default_factory=list)  # '<share:package>/path' of others


@dataclass
class LaunchFile:
    path: Path
    arguments: dict[str, Argument] = field(default_factory=dict)
    configurations: list[tuple[str, int]] = field(default_factory=list)  # name or regex, line
    nodes: list[NodeUse] = field(default_factory=list)
    share_paths: list[tuple[list[str] | None, int]] = field(default_factory=list)
    includes: list[Include] = field(default_factory=list)
    has_generate: bool = False


def _call_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        return func.id if isinstance(func, ast.Name) else getattr(func, 'attr', None)
    return None


def _keyword(call: ast.Call, name: str, position: int | None = None) -> ast.AST | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if position is not None and len(call.args) > position:
        return call.args[position]
    return None


def _constant(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):  # 'a' 'b' split over lines
        left, right = _constant(node.left), _constant(node.right)
        return None if left is None or right is None else left + right
    return None


def _name_pattern(node: ast.AST) -> str | None:
    """A regex for a launch configuration name given as an f-string (``f'{robot}_preset'``)."""
    if not isinstance(node, ast.JoinedStr):
        return None
    parts = [re.escape(v.value) if isinstance(v, ast.Constant) else '.+' for v in node.values]
    return ''.join(parts)


class _Evaluator:
    """Static values of substitution expressions (each a list of alternatives)."""

    def __init__(self, launch: LaunchFile, names: dict[str, ast.AST]) -> None:
        self.launch = launch
        self.names = names

    def __call__(self, node: ast.AST | None) -> list[str] | None:
        text = _constant(node)
        if text is not None:
            return [text]
        if isinstance(node, ast.Name) and node.id in self.names:
            return self(self.names[node.id])
        if isinstance(node, (ast.List, ast.Tuple)):
            return self._concatenate([self(item) for item in node.elts])
        name = _call_name(node)
        if name == 'FindPackageShare':
            package = _constant(_keyword(node, 'package', 0))
            return None if package is None else [f'<share:{package}>']
        if name == 'PathJoinSubstitution':
            parts = _keyword(node, 'substitutions', 0)
            if not isinstance(parts, (ast.List, ast.Tuple)):
                return None
            values = [self(item) for item in parts.elts]
            if any(v is None for v in values):
                return None
            return ['/'.join(combo) for combo in itertools.product(*values)]
        if name == 'LaunchConfiguration':
            return self._configuration(_keyword(node, 'variable_name', 0))
        if name == 'EnvironmentVariable' and _constant(_keyword(node, 'name', 0)) == 'ROS_DISTRO':
            return list(SUPPORTED_DISTROS)
        return None

    def _concatenate(self, values: list[list[str] | None]) -> list[str] | None:
        if any(v is None for v in values):
            return None
        return [''.join(combo) for combo in itertools.product(*values)]

    def _configuration(self, name_node: ast.AST | None) -> list[str] | None:
        name = _constant(name_node)
        pattern = re.escape(name) if name is not None else _name_pattern(name_node)
        if pattern is None:
            return None
        matches = [a for n, a in self.launch.arguments.items() if re.fullmatch(pattern, n)]
        if not matches or any(a.defaults is None for a in matches):
            return None
        return [value for argument in matches for value in argument.defaults]


def _assignments(tree: ast.AST) -> dict[str, ast.AST]:
    """Simple ``name = expression`` assignments anywhere in the file (last one wins)."""
    names: dict[str, ast.AST] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name):
            names[node.targets[0].id] = node.value
    return names


def _share_relative(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    prefix = '<share:wheelsim>'
    return [v[len(prefix):].lstrip('/') for v in values if v.startswith(prefix)]


def parse_launch_file(path: Path) -> LaunchFile:
    """Everything the static tests check about one launch file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    launch = LaunchFile(path=path)
    launch.has_generate = any(isinstance(n, ast.FunctionDef) and
                              n.name == 'generate_launch_description' for n in tree.body)
    evaluate = _Evaluator(launch, _assignments(tree))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    declarations = [c for c in calls if _call_name(c) == 'DeclareLaunchArgument']
    for call in declarations:  # first without defaults: a default may name another argument
        name = _constant(_keyword(call, 'name', 0)) or '<not a constant>'
        description = _constant(_keyword(call, 'description'))
        launch.arguments[name] = Argument(name, [], description, call.lineno)
    for call in declarations:
        name = _constant(_keyword(call, 'name', 0)) or '<not a constant>'
        launch.arguments[name].defaults = None
        launch.arguments[name].defaults = evaluate(_keyword(call, 'default_value'))
    for call in calls:
        kind = _call_name(call)
        if kind == 'LaunchConfiguration':
            name_node = _keyword(call, 'variable_name', 0)
            name = _constant(name_node)
            pattern = re.escape(name) if name is not None else _name_pattern(name_node)
            launch.configurations.append((pattern or '<not static>', call.lineno))
        elif kind == 'Node':
            launch.nodes.append(NodeUse(_constant(_keyword(call, 'package')),
                                        _constant(_keyword(call, 'executable')), call.lineno))
        elif kind == 'IncludeLaunchDescription':
            source = _keyword(call, 'launch_description_source', 0)
            location = _keyword(source, 'launch_file_path', 0) if isinstance(
                source, ast.Call) else None
            values = evaluate(location)
            external = [v for v in values or [] if not v.startswith('<share:wheelsim>')]
            launch.includes.append(Include(_share_relative(values),
                                           _include_arguments(call, evaluate.names),
                                           call.lineno, external))
    # Installed files are named by PathJoinSubstitution([share, ...]) or by a list [share, ...]
    # that concatenates (not the list inside a PathJoinSubstitution).
    joined = {id(_keyword(c, 'substitutions', 0)) for c in calls
              if _call_name(c) == 'PathJoinSubstitution'}
    for node in ast.walk(tree):
        if _call_name(node) == 'PathJoinSubstitution':
            parts = _keyword(node, 'substitutions', 0)
            first = parts.elts[0] if isinstance(parts, (ast.List, ast.Tuple)) else None
        elif isinstance(node, (ast.List, ast.Tuple)) and node.elts and id(node) not in joined:
            first = node.elts[0]
        else:
            continue
        if evaluate(first) == ['<share:wheelsim>']:
            launch.share_paths.append((_share_relative(evaluate(node)), node.lineno))
    return launch


def _include_arguments(call: ast.Call, names: dict[str, ast.AST]) -> list[str]:
    arguments = _keyword(call, 'launch_arguments')
    if isinstance(arguments, ast.Call) and isinstance(arguments.func, ast.Attribute):
        arguments = arguments.func.value  # {...}.items()
    if isinstance(arguments, ast.Name):  # arguments = {...}; ... arguments.items()
        arguments = names.get(arguments.id)
    if not isinstance(arguments, ast.Dict):
        return []
    return [_constant(key) or '<not a constant>' for key in arguments.keys]


def launch_files() -> list[Path]:
    return sorted(LAUNCH_DIR.glob('*.launch.py'))


#: The module through which the launch files start the optional tools (RViz).
BRINGUP_PACKAGES = PACKAGE_DIR / 'wheelsim' / 'bringup' / 'packages.py'


def process_sources() -> list[Path]:
    """The files whose ``Node(...)`` calls start processes: the launch files and
    :data:`BRINGUP_PACKAGES`."""
    return [*launch_files(), BRINGUP_PACKAGES]


def declared_arguments(share_path: str, seen: frozenset[str] = frozenset()) -> set[str]:
    """Arguments a wheelsim launch file accepts: its own and those of the files it includes."""
    launch = parse_launch_file(REPO / share_path)
    names = set(launch.arguments)
    for include in launch.includes:
        for target in include.targets or []:
            if target not in seen:
                names |= declared_arguments(target, seen | {share_path})
    return names


# --- presets and nodes ----------------------------------------------------------------------

VEHICLE_PRESETS = sorted(PARAMS_DIR.glob('*.yaml'))  # Nav2's parameters are in params/nav2/


def node_module(node: str) -> Any:
    return importlib.import_module(f'wheelsim.nodes.{node}')


def node_class(node: str) -> type:
    """The node class a wheelsim node module defines (its ``name`` is the node's)."""
    module = node_module(node)
    classes = [c for _, c in inspect.getmembers(module, inspect.isclass)
               if getattr(c, 'name', None) == node and c.__module__ == module.__name__]
    assert len(classes) == 1, f'wheelsim.nodes.{node} defines {classes}'
    return classes[0]


@contextmanager
def built_node(node: str, context: Any) -> Iterator[Any]:
    """Node ``node`` built on a live seam in the rclpy ``context`` (raising what the node raises,
    a ParameterError on a bad value); yields the seam; the node is closed and destroyed after."""
    from wheelsim.ros.seam import LiveSeam

    seam = LiveSeam(node, context=context)
    try:
        built = node_class(node)(seam)
        try:
            yield seam
        finally:
            close = getattr(built, 'close', None)
            if close is not None:
                close()
    finally:
        seam.destroy()


def preset_vehicles(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(model, flat vehicle_sim values) for each model the preset simulates.

    all_vehicles.yaml holds every model's parameters (chosen with ``model:=``): one entry per
    model; every other preset: its own model.
    """
    tree = yaml.safe_load(path.read_text())['/**/vehicle_sim']['ros__parameters']
    values = flatten(tree)
    models = MODELS if path.stem == 'all_vehicles' else (values['model'],)
    return [(model, {**values, 'model': model}) for model in models]


# --- ROS contexts ---------------------------------------------------------------------------

@contextmanager
def ros_context(params_files: list[Path]) -> Iterator[Any]:
    """An initialised rclpy context whose nodes get ``params_files`` (later files win)."""
    import rclpy

    args = ['--ros-args']
    for path in params_files:
        args += ['--params-file', str(path)]
    context = rclpy.Context()
    rclpy.init(args=args, context=context)
    try:
        yield context
    finally:
        rclpy.shutdown(context=context)


def params_file_overrides(params_files: list[Path], node_name: str,
                          namespace: str = '/') -> dict[str, Any]:
    """The parameter values ROS itself (rcl's YAML parser) gives the node from the files."""
    from wheelsim.ros.seam import LiveSeam

    with ros_context(params_files) as context:
        seam = LiveSeam(node_name, namespace=namespace, context=context,
                        start_parameter_services=False, enable_rosout=False)
        try:
            return seam.parameter_overrides()
        finally:
            seam.destroy()


def section_node_names(params_file: Path) -> list[str]:
    """The node name each section of a params file is for (its last level), as ROS reads it."""
    from wheelsim.core.params_file import read_sections

    return [section.name.rsplit('/', 1)[-1] for section in read_sections([params_file])]


# --- commands in compose files and docs ---------------------------------------------------

def _expand_defaults(text: str) -> str:
    """``${VAR:-default}`` -> ``default`` (what the command runs with VAR unset)."""
    return re.sub(r'\$\{[A-Z_]+:-([^}]*)\}', r'\1', text)


def command_problems(command: str, container_root: str = '/wheelsim/') -> list[str]:
    """What is wrong with a ``ros2 launch`` / ``ros2 run`` / ``rviz2`` command line, if anything.

    Checks the launch file exists and declares every ``name:=value`` argument given, that
    ``ros2 run`` names a known executable, and that files under ``container_root`` (the
    repository inside the Docker image) exist in the repository.
    """
    tokens = _expand_defaults(command).split()
    if tokens[:3] in (['ros2', 'launch', '-n'], ['ros2', 'launch', '--noninteractive']):
        del tokens[2]
    problems = []
    for token in tokens:
        if token.startswith(container_root):
            if not (REPO / token[len(container_root):]).exists():
                problems.append(f'{token} does not exist in the repository')
    if tokens[:3] == ['ros2', 'launch', 'wheelsim'] and len(tokens) > 3:
        target = f'launch/{tokens[3]}'
        if not (REPO / target).is_file():
            return [*problems, f'{target} does not exist']
        accepted = declared_arguments(target)
        for token in tokens[4:]:
            name, _, value = token.partition(':=')
            if name not in accepted:
                problems.append(f'{tokens[3]} declares no argument {name!r}')
            if name == 'preset' and not (PARAMS_DIR / f'{value}.yaml').is_file():
                problems.append(f'preset {value!r} does not exist')
    if tokens[:2] == ['ros2', 'run'] and len(tokens) > 3:
        package, executable = tokens[2], tokens[3]
        known = executable in console_scripts() if package == 'wheelsim' else (
            (package, executable) in EXTERNAL_EXECUTABLES)
        if not known:
            problems.append(f'{package}/{executable} is not a known executable')
    return problems


def launch_tooling_problem() -> str | None:
    """Why launch files cannot run here, in one line; None when launch and launch_ros (of a ROS
    install, or of ../shared/ros-launch) work."""
    try:
        import launch  # noqa: F401
        import launch_ros  # noqa: F401 - imports composition_interfaces too
    except ImportError as err:
        return (f'launch / launch_ros are not importable ({err}): no ROS 2 install or launch '
                'tooling here (see ENVIRONMENT.md, ../shared/ros-launch); the static '
                'launch-file checks ran instead')
    return None


# --- running a launch file -----------------------------------------------------------------

def session_processes(session: int) -> list[str]:
    """``pid command`` of every live (not zombie) process of the session ``session``."""
    alive = []
    for entry in Path('/proc').iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / 'stat').read_text().rsplit(')', 1)[1].split()
            command = (entry / 'cmdline').read_bytes().replace(b'\0', b' ').decode()
        except OSError:
            continue  # ended meanwhile
        if int(fields[3]) == session and fields[0] != 'Z':
            alive.append(f'{entry.name} {command[:200]}')
    return alive


class Launch:
    """``ros2 launch wheelsim FILE ARGUMENTS`` in a session of its own, output in a file
    (``env``: the environment, default this process's; ``noninteractive``: as
    ``ros2 launch -n``, to be ended by :meth:`shut_down`)."""

    def __init__(self, tmp_path: Path, file_name: str, arguments: list[str],
                 env: dict[str, str] | None = None, noninteractive: bool = False) -> None:
        self.log = tmp_path / 'launch.txt'
        with open(self.log, 'w') as stream:
            self.process = subprocess.Popen(
                ending_with_this_process([sys.executable, '-m', 'wheelsim.testing.ros2_launch',
                                          *(['-n'] if noninteractive else []), 'wheelsim',
                                          file_name, *arguments]),
                stdout=stream, stderr=subprocess.STDOUT, start_new_session=True,
                env={**(os.environ if env is None else env), 'PYTHONUNBUFFERED': '1'},
                preexec_fn=default_sigint)

    def text(self) -> str:
        return self.log.read_text()

    def interrupt(self) -> None:
        """Ctrl-C in the launch's terminal: SIGINT to its whole process group. launch, told by
        the SIGINT that its processes have one too, sends them none; it follows with SIGTERM
        after 5 s, then SIGKILL, to any that is still running."""
        os.killpg(self.process.pid, signal.SIGINT)

    def shut_down(self) -> None:
        """SIGINT to a non-interactive launch's process alone: launch sends SIGINT to every
        process it started (then SIGTERM and SIGKILL as for :meth:`interrupt`). Each process
        gets exactly one SIGINT, from launch: after a terminal's Ctrl-C, launch can still signal
        a process that its own SIGINT has just ended (when another process's exit reached launch
        before its SIGINT did), and Python's ``Popen.send_signal`` then reaps it before asyncio
        does, so launch reports exit code 255 ("Unknown child process pid"; Jazzy CI,
        2026-11-29)."""
        self.process.send_signal(signal.SIGINT)

    def wait(self, timeout_s: float) -> int:
        """The launch's exit code once it ended, and no process of its session alive (any left
        is killed, so that a failing test leaves nothing either)."""
        try:
            returncode = self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            pytest.fail(f'the launch did not end within {timeout_s} s:\n{self.text()[-4000:]}')
        left = session_processes(self.process.pid)
        if left:
            os.killpg(self.process.pid, signal.SIGKILL)
        assert not left, f'left running after the launch ended: {left}\n{self.text()[-4000:]}'
        return returncode
