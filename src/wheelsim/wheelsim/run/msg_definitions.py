"""The schema text and type hash a bag holds for a ROS 2 message type, from the installation.

:func:`installed_definition` gives, for ``pkg/msg/Type``, the message definition text
(rosbags' ``Typestore.generate_msgdef``) and RIHS01 hash (``Typestore.hash_rihs01``) of the
definitions in the ``.msg`` files of the ROS installation (``share/<package>/msg/<Type>.msg``
under ``AMENT_PREFIX_PATH``), the type and those it holds parsed on first use: the types a bag
holds are those of the ROS 2 the run used. Text and hash are rosbags' own functions of the parse
tree rosbags' parser gives; the type store that holds the trees is given nothing else (rosbags'
``register`` would also generate each type's Python classes, which only (de)serializing needs:
about a third of building a type).

Parsing: a ``.msg`` file of the usual kind, lines of comments, fields ``type name`` (arrays and
sequences, bounded or not, bounded strings) and constants of integers, plain decimals or
booleans, is read by :func:`simple_types`, a regular expression a line, which gives what rosbags'
parser (``get_types_from_msg``, a PEG parser that takes two thirds of building a type) gives for
them; a file with a line of any other kind (default values, string constants, annotations,
other number forms, other names) is read by rosbags' parser. ``test_run_msg_definitions.py``
compares both parsers on every ``.msg`` file installed (both distros where both are).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator

from rosbags.interfaces import Nodetype
from rosbags.typesys import get_types_from_msg
from rosbags.typesys.store import Typestore

_BASE = r'bool|byte|char|float32|float64|u?int(?:8|16|32|64)'
#: A value: an integer (no leading zero: rosbags reads those as octal), a decimal with a point
#: or a boolean.
_VALUE = r'[+-]?(?:0|[1-9][0-9]*)(?:\.[0-9]*(?:[eE][+-]?[0-9]+)?)?|(?i:true|false)'
#: A field: a bounded string, a base type or a message type (with its package or not), then
#: maybe an array, a sequence or a bounded sequence, the name, maybe a default value (rosbags'
#: ``MSGParser.field``; the parse tree has no default values).
_FIELD = re.compile(
    rf'[ \t]*(?:string<=(?P<bound>[0-9]+)|(?P<base>{_BASE}|string)|'
    r'(?:(?P<package>[a-z](?:_?[a-z0-9]+)*)/)?(?P<type>[A-Z][A-Za-z0-9]*))'
    r'(?P<brackets>\[(?:(?P<size>[0-9]+)|<=(?P<limit>[0-9]+))?\])?'
    rf'[ \t]+(?P<name>[A-Za-z][A-Za-z0-9_]*)(?:[ \t]+(?:{_VALUE}))?[ \t]*')
#: A constant: a base type other than string, the name, a value (``MSGParser.constant``).
_CONSTANT = re.compile(
    rf'[ \t]*(?P<type>{_BASE})[ \t]+(?P<name>[A-Z](?:_?[A-Z0-9]+)*)[ \t]*=[ \t]*'
    rf'(?P<value>{_VALUE})[ \t]*')
_BLANK = re.compile(r'[ \t]*')

Typesdict = dict[str, tuple[list, list]]
"""rosbags' parse trees: ``pkg/msg/Type`` -> (constants, fields)."""


def simple_types(text: str, name: str) -> Typesdict | None:
    """What ``rosbags.typesys.get_types_from_msg(text, name)`` gives for the ``.msg`` file
    ``text`` of ``name`` (``pkg/msg/Type``) if every line is blank, a comment, a field or a
    constant of the usual kinds (see the module docstring); None if one is not."""
    constants, fields = [], []
    for line in text.split('\n'):
        code = line.partition('#')[0]
        if _BLANK.fullmatch(code):
            continue
        if match := _FIELD.fullmatch(code):
            fields.append((match['name'], _field_type(match, name)))
        elif match := _CONSTANT.fullmatch(code):
            constants.append((match['name'], match['type'], _constant(match['value'])))
        else:
            return None
    return {name: (constants, fields)}


def _field_type(field: re.Match, owner: str) -> tuple:
    """The descriptor rosbags gives ``field`` of the type ``owner``."""
    if field['type'] is not None:
        package = field['package'] or (
            'std_msgs' if field['type'] == 'Header' else owner.split('/')[0])
        item = (Nodetype.NAME, f'{package}/msg/{field["type"]}')
    elif field['bound'] is not None:
        item = (Nodetype.BASE, ('string', int(field['bound'])))
    else:
        item = (Nodetype.BASE, (field['base'], 0))
    if field['brackets'] is None:
        return item
    if field['size'] is not None:
        return Nodetype.ARRAY, (item, int(field['size']))
    return Nodetype.SEQUENCE, (item, int(field['limit'] or 0))


def _constant(value: str) -> int | float | bool:
    if value.lower() in ('true', 'false'):
        return value.lower() == 'true'
    return float(value) if '.' in value else int(value)


def parse(text: str, name: str) -> Typesdict:
    """rosbags' parse tree of the ``.msg`` file ``text`` of ``name`` and of the types it
    defines (a ``.msg`` file defines one)."""
    return simple_types(text, name) or get_types_from_msg(text, name)


def msg_file(type_name: str) -> str | None:
    """The ``.msg`` file of ``pkg/msg/Type`` in the ROS installation (None if there is none)."""
    package, _, name = type_name.split('/')
    for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        path = os.path.join(prefix, 'share', package, 'msg', f'{name}.msg')
        if prefix and os.path.isfile(path):
            return path
    return None


def _referenced_types(fields: list) -> Iterator[str]:
    """The message types a parse tree's fields hold (directly, in arrays, sequences)."""
    for _, (node_type, argument) in fields:
        while node_type in (Nodetype.ARRAY, Nodetype.SEQUENCE):
            (node_type, argument), _ = argument
        if node_type == Nodetype.NAME:
            yield argument


def add_installed_types(typestore: Typestore, type_name: str) -> bool:
    """Put the parse trees of ``type_name`` and of the types it holds, from their installed
    ``.msg`` files, into ``typestore.fielddefs`` (those not there yet: nothing else of the store
    is filled, see the module docstring); False, adding nothing, if one has no such file."""
    parsed: Typesdict = {}
    to_read = [type_name]
    while to_read:
        name = to_read.pop()
        if name in parsed or name in typestore.fielddefs:
            continue
        path = msg_file(name)
        if path is None:
            return False
        with open(path, encoding='utf-8') as definition:
            parsed.update(parse(definition.read(), name))
        to_read.extend(_referenced_types(parsed[name][1]))
    typestore.fielddefs.update(parsed)
    return True


@functools.cache
def _definitions() -> Typestore:
    """The parse trees of the installed types used so far in this process (every bag it writes
    takes its types from the same installation)."""
    return Typestore()


@functools.cache
def installed_definition(type_name: str) -> tuple[str, str] | None:
    """``(definition text, RIHS01 hash)`` of ``pkg/msg/Type`` from the installation's ``.msg``
    files, as rosbags writes them; None if it or a type it holds has no ``.msg`` file."""
    definitions = _definitions()
    if not add_installed_types(definitions, type_name):
        return None
    text, _ = definitions.generate_msgdef(type_name, ros_version=2)
    return text, definitions.hash_rihs01(type_name)
