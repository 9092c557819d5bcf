"""yaml_numbers without ROS: what it reads otherwise than rcl, and what dump refuses.

Its reading of every value against rcl itself: test/ros/test_ros_parameters.py.
"""

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


@pytest.mark.parametrize('text', ['\udcff', 'a\udcffb', '1\udcff'])
def test_a_text_with_a_surrogate_is_a_text(text):
    """Bytes the command line could not decode (surrogates) are no number: a text, not a
    UnicodeEncodeError."""
    assert yaml_numbers.ros_value(text) == text


@pytest.mark.parametrize('data, message', [
    ({'p': 2**63}, '9223372036854775808: an integer beyond 64 bits, which ROS reads as a double'),
    ({'p': -2**63 - 1}, 'an integer beyond 64 bits'),
    ({'p': ['a\0b']}, 'a text with a NUL character, where ROS would cut it'),
])
def test_dump_refuses_what_ros_cannot_read_back(data, message):
    with pytest.raises(yaml.YAMLError, match=message):
        yaml_numbers.dump(data)
    assert yaml_numbers.load(yaml_numbers.dump({'p': 2**63 - 1, 'q': -2**63})) == \
        {'p': 2**63 - 1, 'q': -2**63}
