"""YAML with numbers in exponent notation read as ROS 2 reads them: ``1e3`` is a float.

PyYAML follows YAML 1.1, whose floats need both a dot and a signed exponent (``1.0e+3``):
``1e3``, ``1.0e3`` and ``2e-05`` (as Python prints small floats) are strings there. ROS 2 reads
a plain scalar that ``strtod`` takes whole as a double (rcl_yaml_param_parser's ``get_value``,
the parameter files of every node; map_server's YAML through yaml-cpp likewise), so a params
file with ``step_rate: 1e3`` starts vehicle_sim. :func:`load` reads those as floats too, and
refuses a key given twice in one mapping (PyYAML keeps the last, ROS too: one setting silently
overriding another); for everything else it is :func:`yaml.safe_load` (whose YAML 1.1 also
reads ``1_000`` and ``1:30`` as integers, which ROS reads as text). Raises
:class:`yaml.YAMLError` on bad YAML.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import IO, Any

import yaml

EXPONENT_NUMBER = re.compile(r'^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$')
"""A decimal number with an exponent, dot and exponent sign optional."""


class DuplicateKeyError(yaml.YAMLError):
    """A key given twice in one mapping; the message names it and its second line."""


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, with :data:`EXPONENT_NUMBER` resolved as a float and a key given
    twice in one mapping refused (PyYAML keeps the last one without a word)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        first_line: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == 'tag:yaml.org,2002:merge':  # << merges, its keys may be replaced
                continue
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, Hashable):
                continue  # PyYAML's own error follows
            line = key_node.start_mark.line + 1
            if key in first_line:
                name = key_node.start_mark.name  # the file's, or '<unicode string>' for text
                where = '' if name.startswith('<') else f'{name}: '
                raise DuplicateKeyError(f'{where}the key {key!r} is given twice in one mapping '
                                        f'(lines {first_line[key]} and {line}): give it once')
            first_line[key] = line
        return super().construct_mapping(node, deep)


_Loader.add_implicit_resolver('tag:yaml.org,2002:float', EXPONENT_NUMBER, list('-+.0123456789'))


def load(stream: str | IO[str]) -> Any:
    """The YAML document ``stream`` (text or a text file), numbers read as ROS 2 reads them."""
    return yaml.load(stream, Loader=_Loader)
