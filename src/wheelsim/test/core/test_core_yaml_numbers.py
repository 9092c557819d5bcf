"""yaml_numbers without ROS: what it reads otherwise than rcl, and what dump refuses.

Its reading of every value against rcl itself: test/ros/test_ros_parameters.py.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
import yaml

from wheelsim.core import yaml_numbers


def test_a_plain_value_is_read_as_ros_reads_it_but_null_which_is_none():
    """The one value read otherwise than rcl does: ``null``, ``~`` and nothing are None, what
    wheelsim writes for none (rcl: the text, or no value). A plain key is a text, a name as
    in rcl (PyYAML: ``on`` true, ``1_000`` an integer); ``<<`` merges."""
    assert yaml_numbers.load('[null, Null, NULL, ~]') == [None] * 4
    assert yaml_numbers.load('{a: }') == {'a': None}
    assert yaml_numbers.load('{y: 1, 1_000: 2, on: 3, 1: 4, <<: {a: 5}}') == \
        {'y': 1, '1_000': 2, 'on': 3, '1': 4, 'a': 5}
    assert yaml_numbers.load('y') is True and yaml_numbers.load('2001-12-14') == '2001-12-14'


def test_a_key_given_twice_is_refused_as_written_not_after_a_merge():
    """A merge may replace a key of the mapping it merges into (found in review: a mapping
    merging another, used again through its alias, was refused for a key it gave once)."""
    text = 'y: {<<: &x {a: 1, <<: {a: 2}}}\nz: *x\n'
    assert yaml_numbers.load(text) == yaml.safe_load(text)
    with pytest.raises(yaml_numbers.DuplicateKeyError,
                       match=r"the key 'b' is given twice in one mapping \(lines 2 and 3\)"):
        yaml_numbers.load('a: 1\nb: 2\nb: 3\n')
    with pytest.raises(yaml_numbers.DuplicateKeyError, match=r"the key '1' is given twice in "
                                                             r"one mapping \(line 1, columns 2 "
                                                             r"and 8\)"):
        yaml_numbers.load("{1: a, '1': b}")  # one name for rcl; on one line: the columns


def test_a_nul_character_is_refused_naming_its_line():
    """rcl cuts a text at a NUL (``"x\\0y"`` is ``x``), which only double quotes can write."""
    with pytest.raises(yaml.YAMLError, match='a NUL character, where ROS cuts the text') as info:
        yaml_numbers.load('a: 1\nb: "x\\0y"\n')
    assert 'line 2' in str(info.value)


@pytest.mark.parametrize('text', ['\udcff', 'a\udcffb', '1\udcff'])
def test_a_text_with_a_surrogate_is_a_text(text):
    """Bytes the command line could not decode (surrogates) are no number: a text, not a
    UnicodeEncodeError."""
    assert yaml_numbers.ros_value(text) == text


@pytest.mark.parametrize('data, message', [
    ({'p': 2**63}, '9223372036854775808: an integer beyond 64 bits, which ROS reads as a double'),
    ({'p': -2**63 - 1}, 'an integer beyond 64 bits'),
    ({'p': ['a\0b']}, 'a text with a NUL character, where ROS would cut it'),
    ({'p': 'a\udc80'}, 'a lone surrogate'),  # found in review: written as "a\uDC80"
])
def test_dump_refuses_what_ros_cannot_read_back(data, message):
    with pytest.raises(yaml.YAMLError, match=message):
        yaml_numbers.dump(data)
    assert yaml_numbers.load(yaml_numbers.dump({'p': 2**63 - 1, 'q': -2**63})) == \
        {'p': 2**63 - 1, 'q': -2**63}


LOCALE_SOURCES = Path('/usr/share/i18n/locales')


def test_numbers_are_read_in_the_c_locale_whatever_the_process_has(tmp_path):
    """A library may switch the process to a locale whose decimal point is a comma (matplotlib's
    ``axes.formatter.use_locale``); a ROS node reads in the C locale, so ``0.5`` stays a number
    and ``0,5`` a text (the process's ``strtod`` read them the other way round). The locale is
    compiled from glibc's sources into ``tmp_path`` (none but C is installed here)."""
    if shutil.which('localedef') is None or not (LOCALE_SOURCES / 'de_DE').is_file():
        pytest.skip(f'needs localedef and {LOCALE_SOURCES}/de_DE (glibc\'s locale sources) to '
                    'build a comma locale; both are on the project\'s machines and in CI')
    subprocess.run(['localedef', '-i', 'de_DE', '-f', 'UTF-8', str(tmp_path / 'de_DE.UTF-8')],
                   check=True, capture_output=True)
    script = """
import ctypes, json, locale
from wheelsim.core import yaml_numbers
locale.setlocale(locale.LC_NUMERIC, 'de_DE.UTF-8')
libc = ctypes.CDLL(None)
libc.strtod.restype, libc.strtod.argtypes = ctypes.c_double, (ctypes.c_char_p, ctypes.c_void_p)
print(json.dumps([libc.strtod(b'0,5', None),
                  [yaml_numbers.ros_value(t) for t in ('0.5', '0,5', '1e3', ' 7')]]))
"""
    result = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True,
                            env={**os.environ, 'LOCPATH': str(tmp_path)}, check=True)
    process_reads, read = json.loads(result.stdout)
    assert process_reads == 0.5  # the process's own strtod takes the comma
    assert read == [0.5, '0,5', 1000.0, 7]


@pytest.mark.parametrize('text, line', [
    ('a: [1\n', 'while parsing a flow sequence: expected \',\' or \']\', but got \'<stream end>\' '
                 '(line 2, column 1)'),
    ('a: b: c\n', 'mapping values are not allowed here (line 1, column 5)'),
    ('a: 1\na: 2\n', "the key 'a' is given twice in one mapping (lines 1 and 2): give it once"),
])
def test_an_error_is_told_on_one_line_with_its_place(text, line):
    """Found in review: a scenario that is not YAML gave PyYAML's four lines with an excerpt."""
    with pytest.raises(yaml.YAMLError) as info:
        yaml_numbers.load(text)
    assert yaml_numbers.one_line(info.value) == line


@pytest.mark.parametrize('text, line', [
    ('a: ' + '[' * 100 + ']' * 100, 'nested more than 100 sequences or mappings deep '
                                    '(line 1, column 103)'),
    ('a: &x [1, *x]\n', 'the alias *x is inside what &x names (a value that holds itself) '
                       '(line 1, column 11)'),
    ('a: &x\n  b: {c: *x}\n', 'the alias *x is inside what &x names (a value that holds '
                             'itself) (line 2, column 10)'),
])
def test_what_would_end_in_a_recursion_error_is_a_yaml_error(text, line):
    """Found in review: a scenario nested 2000 deep, or holding itself through an alias, gave a
    RecursionError's traceback (PyYAML's composer recurses; a value holding itself recursed in
    the checks). Aliases of a finished value and 100 levels stay readable."""
    with pytest.raises(yaml.YAMLError) as info:
        yaml_numbers.load(text)
    assert yaml_numbers.one_line(info.value) == line
    deepest = 'a: ' + '[' * 99 + ']' * 99
    assert yaml_numbers.load(deepest) == yaml.safe_load(deepest)
    text = 'a: &x [1, {b: 2}]\nc: *x\nd: &y {e: *x}\nf: [*y, *x]\n'
    assert yaml_numbers.load(text) == yaml.safe_load(text)


def _nested_aliases(levels: int) -> str:
    """A mapping of 10 values, then ``levels`` mappings of 10 aliases of the one before: 10 **
    (levels + 1) values expanded, in a few hundred bytes."""
    lines = ['l0: &a0 {' + ', '.join(f'k{i}: 1' for i in range(10)) + '}']
    lines += [f'l{n}: &a{n} {{' + ', '.join(f'm{i}: *a{n - 1}' for i in range(10)) + '}'
              for n in range(1, levels + 1)]
    return '\n'.join(lines) + '\n'


def test_aliases_that_expand_beyond_a_million_values_are_a_yaml_error_at_once():
    """Found in review: a 1 kB scenario of aliases nested nine deep (10**10 values expanded)
    kept `wheelsim run` at 100 % CPU until it was killed (the parameters are flattened name by
    name). Counted as they are read, the aliases stop it within the first million."""
    with pytest.raises(yaml.YAMLError) as info:
        yaml_numbers.load(_nested_aliases(9))
    assert yaml_numbers.one_line(info.value) == (
        'more than 1000000 keys and values (each alias counted as what it names) (line 6, '
        'column 41)')
    text = _nested_aliases(3)  # 10**4 values expanded
    assert yaml_numbers.load(text) == yaml.safe_load(text)


def test_a_value_is_shown_as_yaml_writes_it_numpy_too_and_cut():
    assert [yaml_numbers.shown(v) for v in (None, True, numpy.bool_(False), float('nan'), -0.5,
                                            'a', numpy.array([1.0, 2.0]), (1, 'x'))] == \
        ['null', 'true', 'false', '.nan', '-0.5', "'a'", '[1.0, 2.0]', "[1, 'x']"]
    assert yaml_numbers.shown('x' * 100, limit=10) == "'xxxxxxxxx..."
