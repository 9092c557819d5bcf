"""Code checks: lint clean, and the numeric core free of ROS imports."""

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = PACKAGE_DIR.parents[1]
CORE_DIR = PACKAGE_DIR / 'wheelsim' / 'core'
ROS_MODULE_ROOTS = {
    'rclpy', 'rosgraph_msgs', 'builtin_interfaces', 'tf2_ros', 'launch', 'launch_ros',
    'rosidl_runtime_py', 'ament_index_python', 'message_filters',
}


def is_ros_module(name: str) -> bool:
    root = name.split('.')[0]
    return root in ROS_MODULE_ROOTS or root.endswith(('_msgs', '_srvs', '_interfaces'))


def test_ruff_lint_clean():
    ruff = shutil.which('ruff')
    assert ruff, 'ruff is not installed: make test installs it (tools/requirements-venv.txt)'
    targets = [p for p in ('src', 'test', 'bench', 'tools', 'launch') if (REPO_ROOT / p).exists()]
    result = subprocess.run([ruff, 'check', '--output-format', 'concise', *targets],
                            cwd=REPO_ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize('path', sorted(CORE_DIR.glob('*.py')), ids=lambda p: p.name)
def test_core_module_imports_no_ros(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names]
    imported += [node.module for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module and node.level == 0]
    offending = [name for name in imported if is_ros_module(name)]
    assert not offending, f'{path.name} imports ROS modules: {offending}'


def test_importing_core_loads_no_ros_module():
    modules = [f'wheelsim.core.{p.stem}' for p in sorted(CORE_DIR.glob('*.py'))
               if p.stem != '__init__']
    code = (f'import importlib, json, sys\nfor m in {modules!r}: importlib.import_module(m)\n'
            'print(json.dumps(sorted(sys.modules)))')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            cwd=PACKAGE_DIR)
    assert result.returncode == 0, result.stderr
    loaded = [m for m in json.loads(result.stdout.strip().splitlines()[-1]) if is_ros_module(m)]
    assert not loaded, f'importing wheelsim.core loads ROS modules: {loaded}'
