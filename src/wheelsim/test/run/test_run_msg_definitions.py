"""The schema text and hash of installed types are rosbags' own; the simple .msg parser gives
rosbags' parse trees (or leaves the file to rosbags' parser)."""

import os
from pathlib import Path

import pytest
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.base import TypesysError

from wheelsim.run import msg_definitions

RECORDED_TYPES = ['nav_msgs/msg/Odometry', 'nav_msgs/msg/Path', 'tf2_msgs/msg/TFMessage',
                  'sensor_msgs/msg/JointState', 'geometry_msgs/msg/PoseWithCovarianceStamped',
                  'geometry_msgs/msg/PolygonStamped', 'geometry_msgs/msg/TwistStamped',
                  'geometry_msgs/msg/Vector3Stamped', 'std_msgs/msg/String',
                  'nav_msgs/msg/OccupancyGrid', 'sensor_msgs/msg/LaserScan',
                  'diagnostic_msgs/msg/DiagnosticArray',
                  'geometry_msgs/msg/PointStamped', 'rosgraph_msgs/msg/Clock', 'std_msgs/msg/Bool']
"""What a run records (the room scenarios add map, scan and collision)."""


def installed_msg_files() -> list[Path]:
    """Every .msg file of this installation, and of the other distro's venv if there is one."""
    prefixes = [Path(p) for p in os.environ['AMENT_PREFIX_PATH'].split(os.pathsep) if p]
    repo = Path(__file__).resolve().parents[4]
    prefixes += [*repo.glob('.venv/*'), *repo.glob('.deps/*/install/*')]
    return sorted({f.resolve() for prefix in prefixes for f in prefix.glob('share/*/msg/*.msg')})


def type_name(msg_file: Path) -> str:
    return f'{msg_file.parents[1].name}/msg/{msg_file.stem}'


def rosbags_tree(text: str, name: str) -> str:
    """rosbags' parse tree (repr: ints, floats and booleans told apart), or its error."""
    try:
        return repr(get_types_from_msg(text, name))
    except TypesysError as err:
        return f'error: {err}'


def test_the_simple_parser_reads_every_installed_msg_file_as_rosbags_does():
    files = installed_msg_files()
    assert len(files) > 100
    for msg_file in files:
        text, name = msg_file.read_text(), type_name(msg_file)
        simple = msg_definitions.simple_types(text, name)
        assert simple is not None, msg_file  # all of the usual kinds
        assert repr(simple) == rosbags_tree(text, name), msg_file


@pytest.mark.parametrize(('text', 'simple'), [
    ('int32 X=-1\nint32 Y = +7 # c\nbool B=TRUE\nfloat64 F=1.\nfloat64 G=-0.5e3\nint8 Z=0\n', True),
    ('float64 x 0\nint8 s -2 # unknown\nbool b false\nfloat32 f 0.5\n', True),
    ('Header header\nstd_msgs/Header h2\nPoint p\ngeometry_msgs/Point[] q\n', True),
    ('string<=5 s\nstring<=5[3] a\nuint8[<=4] b\nint16[] c\nfloat64[9] d\n\n  # x\n\t\n', True),
    ('float64 x# no space before the comment\n  float64  y  \n', True),
    ('', True),  # no fields
    ('int32 X=010\n', False),  # octal for rosbags
    ('int32 X=0x10\nint32 Y=0b11\nfloat64 Z=1e5\nfloat64 W=.5\n', False),
    ('string S="a # b"\nstring T=plain # not a comment for rosbags\n', False),
    ("string s 'x'\nint32[] a [1, 2]\n", False),  # defaults of other kinds
    ('@verbatim x\nint32 x\n', False),
    ('int32 x\r\n', False),
    ('int32 x\nuint8[<=] y\n', False),  # rosbags refuses these
    ('int32 FOO_bar=1\n', False),
    ('int32 x=1\n', False),
    ('float64x y\n', False),
    ('wstring w\nFoo_Bar b\npkg/msg/Type t\ntime t2\n', False),
    ('int32 x\n' + '=' * 80 + '\nMSG: pkg/Other\nint32 y\n', False),
], ids=range(18))
def test_the_simple_parser_agrees_with_rosbags_or_leaves_the_file_to_it(text, simple):
    tree = msg_definitions.simple_types(text, 'pkg/msg/T')
    expected = rosbags_tree(text, 'pkg/msg/T')
    assert (tree is not None) == simple
    assert tree is None or repr(tree) == expected
    if expected.startswith('error'):
        with pytest.raises(TypesysError):
            msg_definitions.parse(text, 'pkg/msg/T')
    else:
        assert repr(msg_definitions.parse(text, 'pkg/msg/T')) == expected


def registered_by_rosbags(name: str):
    """A type store into which rosbags registered ``name`` and the types it holds, parsed by
    rosbags, from the installed files (what the bag writer did before)."""
    store, to_read = get_typestore(Stores.EMPTY), [name]
    while to_read:
        current = to_read.pop()
        if current in store.fielddefs:
            continue
        tree = get_types_from_msg(Path(msg_definitions.msg_file(current)).read_text(), current)
        store.register(tree)
        to_read += msg_definitions._referenced_types(tree[current][1])
    return store


@pytest.mark.parametrize('name', RECORDED_TYPES)
def test_installed_definitions_give_rosbags_text_and_hash(name):
    """The installed definitions, nested types and sequences of them included: rosbags' text
    and hash as its own registration gives them, and as its ROS 2 Kilted store has them."""
    text, rihs01 = msg_definitions.installed_definition(name)
    for store in registered_by_rosbags(name), get_typestore(Stores.ROS2_KILTED):
        assert text == store.generate_msgdef(name, ros_version=2)[0]
        assert rihs01 == store.hash_rihs01(name)


def test_a_type_without_an_installed_file_has_no_installed_definition(tmp_path, monkeypatch,
                                                                       request):
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path))
    msg_definitions.installed_definition.cache_clear()
    request.addfinalizer(msg_definitions.installed_definition.cache_clear)
    assert msg_definitions.installed_definition('my_msgs/msg/Missing') is None
    # A type found whose nested type is not: nothing is kept of it.
    (tmp_path / 'share' / 'my_msgs' / 'msg').mkdir(parents=True)
    (tmp_path / 'share' / 'my_msgs' / 'msg' / 'Outer.msg').write_text('Inner inner\n')
    assert msg_definitions.installed_definition('my_msgs/msg/Outer') is None
    assert 'my_msgs/msg/Outer' not in msg_definitions._definitions().fielddefs
