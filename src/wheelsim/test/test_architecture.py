"""The package layout as the README draws it: who may import whom, lint, no cycles.

- ``wheelsim.core`` imports no rclpy and no message package (statically, and when imported);
- each package imports only the packages below it (``LAYERS``);
- a node module never imports another node module;
- no import cycle between modules.
"""

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = PACKAGE_DIR.parents[1]
SOURCE_DIR = PACKAGE_DIR / 'wheelsim'
CORE_DIR = SOURCE_DIR / 'core'
ROS_MODULE_ROOTS = {
    'rclpy', 'rosgraph_msgs', 'builtin_interfaces', 'tf2_ros', 'launch', 'launch_ros',
    'rosidl_runtime_py', 'ament_index_python', 'message_filters',
}
#: Top-level package (or module) of wheelsim -> the ones it may import (itself included).
LAYERS = {
    'core': {'core'},
    'ros': {'core', 'ros'},
    'nodes': {'core', 'ros', 'nodes'},
    'report': {'core', 'report'},
    'testing': {'core', 'ros', 'nodes', 'report', 'shipped', 'run', 'testing'},
    'shipped': {'shipped'},
    'run': {'core', 'ros', 'nodes', 'report', 'shipped', 'run'},
    'cli': {'core', 'report', 'run', 'cli'},
    'entry': {'run', 'cli', 'entry'},
    'bringup': {'core', 'ros', 'nodes', 'run', 'shipped', 'bringup'},
    'sim': {'core', 'report', 'shipped', 'sim'},
}


def is_ros_module(name: str) -> bool:
    root = name.split('.')[0]
    return root in ROS_MODULE_ROOTS or root.endswith(('_msgs', '_srvs', '_interfaces'))


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def imports_of(path: Path) -> list[tuple[str, bool]]:
    """Every absolute import in ``path`` as (module, at module level)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    top_level = set(map(id, tree.body))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top_level) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(f'{node.module}.{alias.name}', id(node) in top_level)
                      for alias in node.names]
    return found


SOURCES = sorted(SOURCE_DIR.rglob('*.py'))
MODULES = {module_name(path): path for path in SOURCES}


def resolve(name: str) -> str | None:
    """The wheelsim module an imported name lives in (``a.b.c`` may be a module or a name)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition('.')[0]
    return None


def layer(module: str) -> str:
    return module.split('.')[1] if module.count('.') else module


def test_ruff_lint_clean():
    ruff = shutil.which('ruff')
    assert ruff, 'ruff is not installed: make test installs it (tools/requirements-common.txt)'
    targets = [p for p in ('src', 'test', 'bench', 'tools', 'launch') if (REPO_ROOT / p).exists()]
    result = subprocess.run([ruff, 'check', '--output-format', 'concise', *targets],
                            cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize('path', sorted(CORE_DIR.rglob('*.py')),
                         ids=lambda p: str(p.relative_to(CORE_DIR)))
def test_core_module_imports_no_ros(path):
    offending = [name for name, _ in imports_of(path) if is_ros_module(name)]
    assert not offending, f'{path.name} imports ROS modules: {offending}'


def modules_loaded_by(modules: list[str]) -> list[str]:
    """Every module in ``sys.modules`` of a fresh interpreter once it has imported ``modules``."""
    code = (f'import importlib, json, sys\nfor m in {modules!r}: importlib.import_module(m)\n'
            'print(json.dumps(sorted(sys.modules)))')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            cwd=PACKAGE_DIR)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_importing_core_loads_no_ros_module():
    modules = [name for name in MODULES if name.startswith('wheelsim.core')]
    loaded = [m for m in modules_loaded_by(modules) if is_ros_module(m)]
    assert not loaded, f'importing wheelsim.core loads ROS modules: {loaded}'


def test_the_nodes_the_command_and_the_launch_files_load_neither_numba_nor_scipy():
    # numba costs a process 0.3 s of CPU to import, scipy's modules 0.1-0.9 s each: the nodes,
    # `wheelsim` and a launch file's imports (the vehicle's configuration) use the kernels
    # compiled ahead of time, and import scipy only where a call needs it
    loaded = modules_loaded_by(['wheelsim.nodes.vehicle_sim', 'wheelsim.nodes.localization',
                                'wheelsim.nodes.planner', 'wheelsim.nodes.controller',
                                'wheelsim.cli', 'wheelsim.run.runner', 'wheelsim.report.metrics',
                                'wheelsim.bringup.params_files', 'wheelsim.bringup.nav2_stock'])
    assert 'numba' not in loaded
    assert not [name for name in loaded if name == 'scipy' or name.startswith('scipy.')]


def scipy_imports_not_on_first_use(path: Path) -> list[int]:
    """The lines of ``path`` that import scipy outside a function (``if TYPE_CHECKING`` aside)
    or inside one without the ``# on first use`` mark (docs/architecture.md, Start-up)."""
    text = path.read_text()
    lines = text.splitlines()
    tree = ast.parse(text, filename=str(path))
    in_function = {id(inner) for node in ast.walk(tree)
                   if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                   for inner in ast.walk(node)}
    type_checking = {id(inner) for node in ast.walk(tree)
                     if isinstance(node, ast.If) and ast.unparse(node.test) == 'TYPE_CHECKING'
                     for inner in ast.walk(node)}
    wrong = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or '']
        else:
            continue
        if not any(name == 'scipy' or name.startswith('scipy.') for name in names) \
                or id(node) in type_checking:
            continue
        if id(node) not in in_function or '# on first use' not in lines[node.lineno - 1]:
            wrong.append(node.lineno)
    return wrong


def test_scipy_is_imported_where_it_is_called():
    # the test above imports what the nodes and the command load; a module-level import
    # elsewhere (a sub-command's, a sampler's) would load scipy with its module all the same
    wrong = [f'{path.relative_to(PACKAGE_DIR)}:{line}' for path in SOURCES
             for line in scipy_imports_not_on_first_use(path)]
    assert not wrong, f'scipy imported outside the function that calls it, or unmarked: {wrong}'


def test_the_scipy_import_check_finds_a_module_level_import(tmp_path):
    module = tmp_path / 'module.py'
    module.write_text('from typing import TYPE_CHECKING\n'
                      'import scipy.optimize\n'
                      'if TYPE_CHECKING:\n    from scipy.spatial import cKDTree\n'
                      'def f():\n    from scipy import ndimage  # on first use: here\n'
                      '    from scipy.stats import qmc\n')
    assert scipy_imports_not_on_first_use(module) == [2, 7]


def test_every_package_has_a_layer():
    packages = {layer(name) for name in MODULES if name != 'wheelsim'}
    assert packages == set(LAYERS), 'add the new package to LAYERS and to the README tree'


@pytest.mark.parametrize('module', sorted(MODULES), ids=str)
def test_imports_follow_the_layers(module):
    if module == 'wheelsim':
        return
    allowed = LAYERS[layer(module)]
    wrong = sorted({target for name, _ in imports_of(MODULES[module])
                    if (target := resolve(name)) and target != 'wheelsim'
                    and layer(target) not in allowed})
    assert not wrong, f'{module} ({layer(module)}) may import only {sorted(allowed)}: {wrong}'


@pytest.mark.parametrize('module', sorted(m for m in MODULES if layer(m) == 'nodes'), ids=str)
def test_node_modules_import_no_other_node(module):
    others = sorted({target for name, _ in imports_of(MODULES[module])
                     if (target := resolve(name)) and layer(target) == 'nodes'
                     and target not in (module, 'wheelsim.nodes')})
    assert not others, f'{module} imports node modules {others}: shared helpers belong in ros/'


def test_no_import_cycles():
    graph = {module: {target for name, top in imports_of(path) if top
                      and (target := resolve(name)) and target not in (module, 'wheelsim')}
             for module, path in MODULES.items()}
    state: dict[str, int] = {}  # 1: on the stack, 2: done

    def visit(module: str, stack: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycle = stack[stack.index(target):] + [target]
                pytest.fail('import cycle: ' + ' -> '.join(cycle))
            if target not in state:
                visit(target, [*stack, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
