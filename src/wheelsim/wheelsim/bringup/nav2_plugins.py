"""The ROS packages of the Nav2 plugins a Nav2 params file names, so that a launch requires what
its Nav2 parameters load (a file may name another controller than the shipped one)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml


def plugin_packages(params_files: Sequence[str]) -> list[str]:
    """The package of every ``plugin`` value in ``params_files`` (empty names skipped), once
    each, in file order: Nav2 names a plugin ``package::Class`` (``package/Class`` in older
    files). RuntimeError naming a file that cannot be read as YAML."""
    packages: dict[str, None] = {}
    for path in params_files:
        if not path:
            continue
        try:
            tree = yaml.safe_load(Path(path).read_text(encoding='utf-8'))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
            problem = ' '.join(str(err).split())
            raise RuntimeError(f'{path}: not a Nav2 params file ({problem}); nothing was '
                               'started') from None
        for plugin in _plugins(tree):
            packages[re.split('::|/', plugin, maxsplit=1)[0]] = None
    return list(packages)


def _plugins(tree: Any) -> Iterator[str]:
    """The text values of the ``plugin`` keys anywhere in ``tree``."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            if key == 'plugin' and isinstance(value, str):
                yield value
            else:
                yield from _plugins(value)
    elif isinstance(tree, list):
        for item in tree:
            yield from _plugins(item)
