"""Read a map_server map (YAML + image) into the cell values map_server would publish.

The semantics are those of nav2_map_server's ``map_io.cpp`` (``loadMapYaml`` and
``loadMapFromFile``, identical in navigation2 1.3.13 / Jazzy and 1.4.2 / Kilted; see
docs/bringup.md for the lines):

- YAML keys: ``image`` (path, relative to the YAML file's folder unless absolute; ``~/``
  expanded), ``resolution`` [m/cell], ``origin`` ``[x, y, yaw]`` of the lower-left pixel's
  corner, ``occupied_thresh``, ``free_thresh``, ``negate`` (integer or boolean), optional
  ``mode`` (``trinary`` by default, ``scale`` or ``raw``, any case).
- ``trinary`` and ``scale``: the grey level ``g`` (0..255) gives ``p = g / 255``, and
  ``p = 1 - p`` unless ``negate`` (dark is occupied). ``p >= occupied_thresh`` is 100,
  ``p <= free_thresh`` is 0 (written last, so it wins), anything else -1 (trinary) or, in scale
  mode, ``round((p - free_thresh) / (occupied_thresh - free_thresh) * 100)``. Pixels with alpha
  below 255 are -1. Computed in single precision as map_io does with Eigen.
- ``raw``: the grey level itself; values outside 0..100 are -1.
- The image's top row is the map's last row (``OccupancyGrid`` starts at the origin).

The image is read with Pillow; colour images are turned grey with ITU-R 601-2 luma (Pillow's
``L`` mode; GraphicsMagick, which map_server uses, may differ by one grey level on coloured
pixels), 16-bit images are scaled to 8 bits as map_io reads them from GraphicsMagick
(``v // 257``: ``ScaleQuantumToChar``). A PNG's transparent colour (tRNS) counts as alpha 0, as
GraphicsMagick's matte.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from numpy.typing import NDArray

from wheelsim.core import yaml_numbers
from wheelsim.core.params import ParameterError, unknown_keys
from wheelsim.core.world.occupancy import (
    DEFAULT_OCCUPIED_THRESHOLD,
    FREE,
    MIN_RESOLUTION_M,
    OCCUPIED,
    UNKNOWN,
    MapError,
    OccupancyMap,
    check_grid,
)

MODES = ('trinary', 'scale', 'raw')
#: The keys Nav2's map_server reads from a map YAML (map_io's ``loadMapYaml``).
MAP_KEYS = ('image', 'resolution', 'origin', 'negate', 'occupied_thresh', 'free_thresh', 'mode')


@dataclass(frozen=True)
class MapFile:
    """What a map YAML names and the cell values map_server publishes for it.

    ``values`` (rows, cols) int8, row 0 at the origin (the image's bottom row).
    """

    yaml_path: Path
    image_path: Path
    resolution_m: float
    origin: tuple[float, float, float]
    negate: bool
    occupied_thresh: float
    free_thresh: float
    mode: str
    values: NDArray[np.int8]
    ignored: tuple[str, ...] = ()
    """The YAML's keys map_server does not read (:data:`MAP_KEYS`), each with the closest one
    it reads: ``'mod (did you mean mode?)'``; ignored here as there."""

    def occupancy_map(self, occupied_threshold: int = DEFAULT_OCCUPIED_THRESHOLD) -> OccupancyMap:
        height, width = self.values.shape
        return OccupancyMap.from_values(self.values, width, height, self.resolution_m,
                                        self.origin, occupied_threshold)


def _fail(path: Path, key: str, problem: str) -> MapError:
    return MapError(f'map {path}: {key}: {problem}')


def _number(path: Path, doc: dict[str, Any], key: str) -> float:
    if key not in doc:
        raise _fail(path, key, 'missing (map_server needs it)')
    value = doc[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _fail(path, key, f'{yaml_numbers.shown(value)} must be a finite number')
    return float(value)


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        doc = yaml_numbers.load(path.read_text(encoding='utf-8'))
    except OSError as err:
        raise MapError(f'cannot read map {path}: {err.strerror}') from None
    except UnicodeDecodeError as err:
        raise MapError(f'map {path}: {yaml_numbers.not_utf8(err)}') from None
    except yaml.YAMLError as err:
        raise MapError(f'map {path}: not valid YAML: {yaml_numbers.one_line(err)}') from None
    if not isinstance(doc, dict):
        raise MapError(f'map {path}: a map_server YAML maps keys (image, resolution, origin, '
                       'negate, occupied_thresh, free_thresh, mode) to values')
    return doc


def _image_path(path: Path, doc: dict[str, Any]) -> Path:
    image = doc.get('image')
    if not isinstance(image, str) or not image:
        raise _fail(path, 'image', f'{yaml_numbers.shown(image)} must name the image file')
    image = os.path.expanduser(image) if image.startswith('~/') else image
    return Path(image) if os.path.isabs(image) else path.parent / image


def _negate(path: Path, doc: dict[str, Any]) -> bool:
    if 'negate' not in doc:
        raise _fail(path, 'negate', 'missing (map_server needs it: 0 or 1)')
    value = doc['negate']
    if not isinstance(value, (bool, int)):
        raise _fail(path, 'negate', f'{yaml_numbers.shown(value)} must be an integer or true/false')
    return bool(value)


def _mode(path: Path, doc: dict[str, Any]) -> str:
    value = doc.get('mode', 'trinary')
    if not isinstance(value, str) or value.lower() not in MODES:
        raise _fail(path, 'mode', f'{value!r} must be one of {", ".join(MODES)}')
    return value.lower()


def _yaml_path(yaml_path: str | os.PathLike) -> Path:
    text_path = os.fspath(yaml_path)
    return Path(os.path.expanduser(text_path) if text_path.startswith('~/') else text_path)


def map_image_path(yaml_path: str | os.PathLike) -> Path:
    """The image a map_server YAML names (without reading it); raises :class:`MapError`."""
    path = _yaml_path(yaml_path)
    return _image_path(path, _read_yaml(path))


def load_map_file(yaml_path: str | os.PathLike) -> MapFile:
    """Read a map_server YAML and its image; raises :class:`MapError` naming the key."""
    path = _yaml_path(yaml_path)
    doc = _read_yaml(path)
    image_path = _image_path(path, doc)
    resolution = _number(path, doc, 'resolution')
    if not resolution >= MIN_RESOLUTION_M:
        raise _fail(path, 'resolution', f'{resolution!r} must be >= {MIN_RESOLUTION_M:g} '
                    '(metres per cell)')
    origin = doc.get('origin')
    if (not isinstance(origin, list) or len(origin) != 3
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                       and math.isfinite(v) for v in origin)):
        raise _fail(path, 'origin', f'{origin!r} must be three finite numbers [x, y, yaw]')
    occupied = _number(path, doc, 'occupied_thresh')
    free = _number(path, doc, 'free_thresh')
    negate = _negate(path, doc)
    mode = _mode(path, doc)
    # Outside [0, 1] a threshold decides no cell; free at or above occupied overrides it (p <=
    # free_thresh is written last). The raw mode uses neither.
    if mode != 'raw' and not 0.0 <= free < occupied <= 1.0:
        raise _fail(path, 'occupied_thresh', f'{occupied!r} and free_thresh {free!r}: need '
                    '0 <= free_thresh < occupied_thresh <= 1')
    gray, alpha = _read_image(image_path)
    values = cell_values(gray, alpha, mode, negate, occupied, free)
    origin = tuple(float(v) for v in origin)
    try:
        check_grid(values.shape[1], values.shape[0], resolution, origin)
    except MapError as err:
        raise MapError(f'map {path}: {err}') from None
    ignored = tuple(key if close is None else f'{key} (did you mean {close}?)'
                    for key, close in unknown_keys(MAP_KEYS, map(str, doc)))
    return MapFile(path, image_path, resolution, origin, negate, occupied, free, mode, values,
                   ignored)


def load_map_parameter(map_yaml: str) -> MapFile:
    """:func:`load_map_file` of the parameter ``world.map_yaml`` (relative to the working
    folder); raises :class:`~wheelsim.core.params.ParameterError` naming the parameter."""
    try:
        return load_map_file(map_yaml)
    except MapError as err:
        raise ParameterError('world.map_yaml', map_yaml, str(err)) from None


def _read_image(path: Path) -> tuple[NDArray[np.uint8], NDArray[np.uint8] | None]:
    """(grey levels, alpha or None) of an image, top row first."""
    from PIL import Image, UnidentifiedImageError  # only where a map is read (25 ms)

    try:
        with Image.open(path) as image:
            image.load()
            # an alpha channel, or a PNG's tRNS colour (grey, RGB or palette images)
            has_alpha = image.mode in ('RGBA', 'LA', 'PA', 'La', 'RGBa') or (
                'transparency' in image.info)
            if image.mode in ('I;16', 'I;16B', 'I;16L', 'I'):
                wide = np.asarray(image, dtype=np.int64)
                gray = np.clip(wide // 257, 0, 255).astype(np.uint8)
            else:
                gray = np.asarray(image.convert('L'), dtype=np.uint8)
            alpha = np.asarray(image.convert('RGBA').getchannel('A')) if has_alpha else None
    except FileNotFoundError:
        raise MapError(f'map image {path}: no such file') from None
    except (OSError, UnidentifiedImageError, ValueError) as err:  # ValueError: a cut header
        raise MapError(f'map image {path}: cannot be read as an image: {err}') from None
    except Image.DecompressionBombError as err:  # over twice Image.MAX_IMAGE_PIXELS
        raise MapError(f'map image {path}: too large to read: {err}') from None
    if gray.size == 0:
        raise MapError(f'map image {path}: has no pixels')
    return gray, alpha


def cell_values(gray: NDArray[np.uint8], alpha: NDArray[np.uint8] | None, mode: str, negate: bool,
                occupied_thresh: float, free_thresh: float) -> NDArray[np.int8]:
    """map_io's conversion of grey levels (top row first) into cell values (row 0 at the
    bottom); see the module docstring."""
    if mode == 'raw':
        values = gray.astype(np.int16)
        values[(values < FREE) | (values > OCCUPIED)] = UNKNOWN
        return np.flipud(values.astype(np.int8)).copy()
    if mode not in ('trinary', 'scale'):
        raise MapError(f'mode {mode!r} must be one of {", ".join(MODES)}')
    p = gray.astype(np.float32) / np.float32(255.0)
    if not negate:
        p = np.float32(1.0) - p
    occupied, free = np.float32(occupied_thresh), np.float32(free_thresh)
    values = np.full(gray.shape, UNKNOWN, dtype=np.int8)
    values[p >= occupied] = OCCUPIED
    values[p <= free] = FREE
    if mode == 'scale':
        between = (p > free) & (p < occupied)
        scale = np.float32(occupied_thresh - free_thresh)  # a double in map_io, then a float
        scaled = (p - free) / scale * np.float32(100.0)
        rounded = np.floor(scaled)
        rounded[scaled - rounded >= 0.5] += 1.0  # std::round: halves away from zero
        values[between] = rounded[between].astype(np.int8)
    if alpha is not None:
        values[alpha < 255] = UNKNOWN
    return np.flipud(values).copy()
