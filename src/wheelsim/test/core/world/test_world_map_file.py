"""Map YAML + image -> the cell values nav2_map_server publishes (map_io.cpp semantics)."""

import math
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from wheelsim.core.params import ParameterError
from wheelsim.core.world.map_file import (
    cell_values,
    load_map_file,
    load_map_parameter,
    map_image_path,
)
from wheelsim.core.world.occupancy import MapError

YAML = """image: {image}
resolution: 0.1
origin: [-1.0, -2.0, 0.5]
negate: {negate}
occupied_thresh: 0.65
free_thresh: 0.25
{mode}
"""


def write_map(tmp_path, pixels, negate=0, mode='', image_mode='L', name='map.pgm', extra=''):
    image = Image.fromarray(np.asarray(pixels, dtype=np.uint8), mode=image_mode)
    image.save(tmp_path / name)
    path = tmp_path / 'map.yaml'
    path.write_text(YAML.format(image=name, negate=negate, mode=mode) + extra)
    return path


def test_trinary_map_is_flipped_and_thresholded(tmp_path):
    # Top image row first: black (occupied), white (free), mid grey (unknown).
    pixels = [[0, 254, 128],
              [255, 255, 0]]
    loaded = load_map_file(write_map(tmp_path, pixels))
    # The image's bottom row is row 0 of the grid.
    np.testing.assert_array_equal(loaded.values, [[0, 0, 100], [100, 0, -1]])
    assert (loaded.resolution_m, loaded.origin, loaded.mode) == (0.1, (-1.0, -2.0, 0.5), 'trinary')
    assert loaded.image_path == tmp_path / 'map.pgm'


@pytest.mark.parametrize('gray, negate, expected', [
    # p = 1 - g/255 (negate 0): occupied when p >= 0.65, free when p <= 0.25.
    (89, 0, 100),   # p = 0.6510 >= 0.65
    (90, 0, -1),    # p = 0.6471
    (191, 0, -1),   # p = 0.2510
    (192, 0, 0),    # p = 0.2471
    # negate: p = g/255
    (166, 1, 100),  # p = 0.6510
    (63, 1, 0),     # p = 0.2471
    (64, 1, -1),    # p = 0.2510
])
def test_trinary_thresholds_at_their_edges(gray, negate, expected):
    values = cell_values(np.array([[gray]], np.uint8), None, 'trinary', bool(negate), 0.65, 0.25)
    assert values[0, 0] == expected


def test_scale_mode_scales_the_between_values_and_rounds_half_away_from_zero():
    gray = np.arange(256, dtype=np.uint8).reshape(1, -1)
    values = cell_values(gray, None, 'scale', False, 0.65, 0.25)[0]
    p = 1.0 - np.arange(256) / 255.0
    exact = (p - 0.25) / 0.4 * 100
    expected = np.where(p >= 0.65, 100, np.where(p <= 0.25, 0, np.floor(exact + 0.5)))
    # Grey 102 and 153 scale to exactly 87.5 and 37.5; map_io works in single precision, where
    # they come out as 87.5000 and 37.4999, so std::round gives 88 and 37.
    expected[102], expected[153] = 88, 37
    np.testing.assert_array_equal(values, expected.astype(np.int8))
    assert set(values.tolist()) >= {0, 50, 100}


def test_raw_mode_keeps_0_to_100_and_makes_the_rest_unknown():
    gray = np.array([[0, 1, 100, 101, 200, 255]], np.uint8)
    np.testing.assert_array_equal(cell_values(gray, None, 'raw', False, 0.65, 0.25),
                                  [[0, 1, 100, -1, -1, -1]])


def test_transparent_pixels_are_unknown(tmp_path):
    pixels = np.zeros((1, 3, 2), np.uint8)  # black, alpha 255 / 254 / 0
    pixels[0, :, 1] = [255, 254, 0]
    loaded = load_map_file(write_map(tmp_path, pixels, image_mode='LA', name='map.png'))
    np.testing.assert_array_equal(loaded.values, [[100, -1, -1]])


@pytest.mark.parametrize('image_mode, colour', [('L', 0), ('RGB', (0, 0, 0))])
def test_a_png_s_transparent_colour_is_unknown(tmp_path, image_mode, colour):
    """A grey or RGB PNG with a tRNS chunk: GraphicsMagick (map_server) takes it as a matte."""
    from PIL import Image

    grey = np.array([[0, 128, 255]], np.uint8)
    image = Image.fromarray(grey, 'L').convert(image_mode)
    image.save(tmp_path / 'map.png', transparency=colour)
    (tmp_path / 'map.yaml').write_text('image: map.png\nresolution: 0.05\norigin: [0, 0, 0]\n'
                                       'occupied_thresh: 0.65\nfree_thresh: 0.25\nnegate: 0\n')
    np.testing.assert_array_equal(load_map_file(str(tmp_path / 'map.yaml')).values,
                                  [[-1, -1, 0]])


def test_16_bit_grey_levels_are_cut_to_8_bits_as_graphicsmagick_does(tmp_path):
    """``ScaleQuantumToChar`` of a 16-bit quantum is ``v // 257`` (GraphicsMagick 1.3.40, as
    map_io's ``write(..., "I", CharPixel, ...)`` gives it)."""
    from PIL import Image

    levels = np.array([[0, 128, 129, 25828, 32768, 32895, 65535]], np.uint16)
    Image.fromarray(levels).save(tmp_path / 'map.png')  # mode I;16
    (tmp_path / 'map.yaml').write_text('image: map.png\nresolution: 0.05\norigin: [0, 0, 0]\n'
                                       'occupied_thresh: 0.65\nfree_thresh: 0.25\nnegate: 0\n'
                                       'mode: raw\n')
    loaded = load_map_file(str(tmp_path / 'map.yaml'))
    np.testing.assert_array_equal(loaded.values, [[0, 0, 0, 100, -1, -1, -1]])


def test_colour_images_turn_grey_and_mode_is_case_insensitive(tmp_path):
    pixels = np.zeros((1, 2, 3), np.uint8)
    pixels[0, 1] = [255, 255, 255]
    loaded = load_map_file(write_map(tmp_path, pixels, mode='mode: Trinary', image_mode='RGB',
                                     name='map.png'))
    np.testing.assert_array_equal(loaded.values, [[100, 0]])


def test_an_occupancy_map_from_a_file_places_its_cells(tmp_path):
    world = load_map_file(write_map(tmp_path, [[0, 255], [255, 255]])).occupancy_map()
    assert world.obstacles[1, 0]  # the image's top-left pixel
    x, y = world.cell_center(1, 0)
    # Cell (1, 0) centre is (0.05, 0.15) in the grid, rotated by 0.5 rad and moved to (-1, -2).
    assert x == pytest.approx(-1.0 + 0.05 * math.cos(0.5) - 0.15 * math.sin(0.5))
    assert y == pytest.approx(-2.0 + 0.05 * math.sin(0.5) + 0.15 * math.cos(0.5))


def test_numbers_in_exponent_notation_are_numbers_as_map_server_reads_them(tmp_path):
    """yaml-cpp reads ``1e-1`` as 0.1; YAML 1.1 (PyYAML) as a string."""
    path = write_map(tmp_path, [[0, 255], [255, 255]])
    path.write_text(path.read_text().replace('resolution: 0.1', 'resolution: 1e-1').replace(
        'origin: [-1.0, -2.0, 0.5]', 'origin: [-1e0, -2E0, 5e-1]'))
    loaded = load_map_file(path)
    assert (loaded.resolution_m, tuple(loaded.origin)) == (0.1, (-1.0, -2.0, 0.5))


@pytest.mark.parametrize('replace, message', [
    ('resolution: 0.1', 'resolution: -0.1 must be >= 1e-06'),
    ('origin: [-1.0, -2.0, 0.5]', 'origin: [1, 2] must be three finite numbers'),
    ('negate: 0', 'negate: missing'),
    ('free_thresh: 0.25', 'free_thresh: missing'),
    ('image: map.pgm', "image: '' must name the image file"),
])
def test_bad_yaml_fields_are_named(tmp_path, replace, message):
    path = write_map(tmp_path, [[0]])
    broken = {'resolution: 0.1': 'resolution: -0.1', 'origin: [-1.0, -2.0, 0.5]': 'origin: [1, 2]',
              'negate: 0': '', 'free_thresh: 0.25': '', 'image: map.pgm': "image: ''"}[replace]
    path.write_text(path.read_text().replace(replace, broken))
    with pytest.raises(MapError, match=message.replace('[', r'\[').replace(']', r'\]')):
        load_map_file(path)


@pytest.mark.parametrize('occupied, free', [(2.0, 0.25), (0.65, -1.0), (0.1, 0.9), (0.5, 0.5)])
def test_thresholds_that_leave_no_free_and_occupied_cells_are_named(tmp_path, occupied, free):
    """Found in review: thresholds of 2 and -1 were taken and made every cell unknown (no
    obstacle: no collision, no clearance)."""
    path = write_map(tmp_path, [[0]])
    text = path.read_text().replace('occupied_thresh: 0.65', f'occupied_thresh: {occupied}')
    path.write_text(text.replace('free_thresh: 0.25', f'free_thresh: {free}'))
    with pytest.raises(MapError, match=r'occupied_thresh: .* need 0 <= free_thresh < '
                                       r'occupied_thresh <= 1'):
        load_map_file(path)


def test_a_resolution_finer_than_a_micrometre_is_named(tmp_path):
    """Found in review: 1e-300 m cells passed and the run's clearance metric overflowed."""
    path = write_map(tmp_path, [[0]])
    path.write_text(path.read_text().replace('resolution: 0.1', 'resolution: 1.0e-300'))
    with pytest.raises(MapError, match=r'resolution: 1e-300 must be >= 1e-06 \(metres per cell'):
        load_map_file(path)


def test_the_raw_mode_uses_no_thresholds_and_takes_any(tmp_path):
    path = write_map(tmp_path, [[40]], mode='mode: raw')
    path.write_text(path.read_text().replace('occupied_thresh: 0.65', 'occupied_thresh: 2'))
    assert load_map_file(path).values.tolist() == [[40]]


def test_a_grid_beyond_the_coordinate_bound_is_named(tmp_path):
    """Found by reading: such a file once passed the loader and made vehicle_sim crash."""
    path = write_map(tmp_path, [[0, 0]])
    path.write_text(path.read_text().replace('origin: [-1.0, -2.0, 0.5]',
                                             'origin: [-1.0e+308, 0.0, 0.0]'))
    with pytest.raises(MapError, match=r'map .*map.yaml: map origin \(-1e\+308, 0.0, 0.0\) with '
                       r'2 x 1 cells of 0.1 m: the grid must lie within \+-1e\+09 m'):
        load_map_file(path)


def test_an_image_too_large_to_decode_is_named(tmp_path):
    """Found in review: an image over Pillow's decompression bomb limit (a PNG header of
    20000 x 20000 pixels here: 1 km square at 5 cm) gave Pillow's traceback."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack('>I', len(data)) + kind + data
                + struct.pack('>I', zlib.crc32(kind + data)))

    header = struct.pack('>IIBBBBB', 20000, 20000, 8, 0, 0, 0, 0)  # 8-bit grey
    (tmp_path / 'huge.png').write_bytes(b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header)
                                        + chunk(b'IEND', b''))
    path = tmp_path / 'map.yaml'
    path.write_text(YAML.format(image='huge.png', negate=0, mode=''))
    with pytest.raises(MapError, match=r'map image .*huge.png: too large to read: .*400000000 '
                                       'pixels'):
        load_map_file(path)


def test_a_map_parameter_that_cannot_be_read_names_the_parameter(tmp_path):
    with pytest.raises(ParameterError, match=r'parameter world.map_yaml = .*nothing.yaml.* is '
                                             'invalid: cannot read map'):
        load_map_parameter(str(tmp_path / 'nothing.yaml'))
    assert load_map_parameter(str(write_map(tmp_path, [[0]]))).values.shape == (1, 1)


def test_bad_mode_and_missing_image_are_named(tmp_path):
    path = write_map(tmp_path, [[0]], mode='mode: fuzzy')
    with pytest.raises(MapError, match="mode: 'fuzzy' must be one of trinary, scale, raw"):
        load_map_file(path)
    path = write_map(tmp_path, [[0]])
    (tmp_path / 'map.pgm').unlink()
    with pytest.raises(MapError, match='map.pgm: no such file'):
        load_map_file(path)
    with pytest.raises(MapError, match='cannot read map'):
        load_map_file(tmp_path / 'nothing.yaml')


def test_an_image_cut_in_its_header_is_named(tmp_path):
    """Found in review: a PGM cut inside its header gave Pillow's ValueError as a traceback."""
    path = write_map(tmp_path, [[0, 100], [100, 0]])
    (tmp_path / 'map.pgm').write_bytes((tmp_path / 'map.pgm').read_bytes()[:5])
    with pytest.raises(MapError, match=r'map image .*map.pgm: cannot be read as an image: '):
        load_map_file(path)


def test_keys_map_server_does_not_read_are_ignored_and_listed(tmp_path):
    """Found in review: a typo (mod: scale) left the default trinary mode without a word;
    map_server ignores such keys, so they are ignored here too, and listed for a warning."""
    loaded = load_map_file(write_map(tmp_path, [[0, 254]], extra='mod: scale\nsource: survey\n'))
    assert loaded.mode == 'trinary'
    assert loaded.ignored == ('mod (did you mean mode?)', 'source')
    assert load_map_file(write_map(tmp_path, [[0, 254]], mode='mode: scale')).ignored == ()


def test_a_map_yaml_that_is_not_utf8_is_named(tmp_path):
    """Found in review: a UnicodeDecodeError traceback from wheelsim run."""
    path = tmp_path / 'map.yaml'
    path.write_bytes(b'image: room.pgm\xff\n')
    with pytest.raises(MapError, match=r'^map .*map.yaml: not UTF-8 text \(byte 0xff at position '
                                       r'15\); save it as UTF-8$'):
        load_map_file(path)
    with pytest.raises(MapError, match='not UTF-8 text'):
        map_image_path(path)


def test_the_image_path_is_read_without_the_image(tmp_path):
    path = write_map(tmp_path, [[0]])
    (tmp_path / 'map.pgm').unlink()
    assert map_image_path(path) == tmp_path / 'map.pgm'
