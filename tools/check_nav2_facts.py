"""Check test/nav2_upstream_facts.yaml against a navigation2 git clone at the release tags.

Every fact names a file, a line per distro and text on that line; stock values also a value,
read from the stock nav2_params.yaml at the tag. Prints one line per fact and distro (ok or what
differs) and exits 1 when anything differs.

    git clone https://github.com/ros-navigation/navigation2 /tmp/navigation2
    python tools/check_nav2_facts.py /tmp/navigation2
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

FACTS = Path(__file__).resolve().parents[1] / 'test' / 'nav2_upstream_facts.yaml'


def per_distro(value: Any, distro: str) -> Any:
    """``value[distro]`` when a fact gives one value per distro, else ``value``."""
    return value.get(distro) if isinstance(value, dict) else value


def parameter(tree: dict, dotted: str) -> Any:
    """The value of ``node.path.parameter`` in a ROS params file tree (``ros__parameters`` is
    stepped into where the node path ends); KeyError if absent."""
    node = tree
    for part in dotted.split('.'):
        if isinstance(node, dict) and part not in node and 'ros__parameters' in node:
            node = node['ros__parameters']
        node = node[part]
    return node


def line_checks(facts: dict, distro: str) -> Iterator[tuple[str, str, int, str]]:
    """(fact, file, line, text) for every fact that exists in ``distro``."""
    arguments = facts['launch_arguments']
    for name, lines in arguments['names'].items():
        if distro in lines:
            yield f'argument {name}', arguments['file'], lines[distro], f"'{name}'"
    for key, fact in facts['declared_parameters'].items():
        yield f'parameter {key}', fact['file'], fact[distro], fact['text']
    stock = facts['stock_values']
    for key, fact in stock['keys'].items():
        yield f'stock {key}', stock['file'], fact[distro], key.rsplit('.', 1)[1] + ':'
    for name, fact in facts['sources'].items():
        if distro in fact:
            yield (name, per_distro(fact['file'], distro), fact[distro],
                   per_distro(fact['text'], distro))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('navigation2', type=Path, help='a git clone of navigation2 with tags')
    args = parser.parse_args()
    facts = yaml.safe_load(FACTS.read_text())
    failures = 0

    def show(tag: str, path: str) -> list[str] | None:
        result = subprocess.run(['git', '-C', str(args.navigation2), 'show', f'{tag}:{path}'],
                                capture_output=True, text=True)
        return result.stdout.splitlines() if result.returncode == 0 else None

    for distro, release in facts['releases'].items():
        tag = release['tag']
        commit = subprocess.run(['git', '-C', str(args.navigation2), 'rev-parse',
                                 f'{tag}^{{commit}}'], capture_output=True, text=True).stdout
        if commit.strip() != release['commit']:
            print(f'{distro}: tag {tag} is {commit.strip() or "missing"}, facts name '
                  f'{release["commit"]}')
            failures += 1
        for fact, path, line, text in line_checks(facts, distro):
            lines = show(tag, path)
            found = lines is not None and 0 < line <= len(lines) and text in lines[line - 1]
            print(f'{"ok  " if found else "FAIL"} {distro} {tag} {fact}: {path}:{line} {text}')
            failures += not found
        stock = yaml.safe_load('\n'.join(show(tag, facts['stock_values']['file']) or []))
        for key, fact in facts['stock_values']['keys'].items():
            expected = per_distro(fact['value'], distro)
            try:
                value = parameter(stock, key)
            except (KeyError, TypeError):
                value = '<absent>'
            if value != expected:
                print(f'FAIL {distro} {tag} stock {key} = {value!r}, facts say {expected!r}')
                failures += 1
    print(f'{failures} difference(s)')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
