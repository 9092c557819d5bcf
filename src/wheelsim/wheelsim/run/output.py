"""Where a run writes: ``OUTPUT/<name>/``, and never anything outside it.

- :func:`check_run_name`: a scenario name is one safe path component (not empty, ``.`` or
  ``..``, no path separator, no control or invisible format character, no space at either
  end, at most
  :data:`MAX_NAME_BYTES`), so ``OUTPUT/<name>`` is a folder directly inside the output root.
- :func:`run_folder`: an existing run folder is kept and the run goes to ``<name>-2``,
  ``<name>-3``, ...; with ``overwrite`` the folder is reused after removing only what a run writes
  (:func:`run_files`), and only from a folder a run made (it holds :data:`MARKER`). Symbolic links
  are never followed: one where a run writes is an OutputError, as is a file of the user's in a
  folder a run makes whole (:data:`WHOLE_FOLDERS`).
- :func:`command_folder`: the folder of a sweep or a tune, which a rerun resumes: one it made
  (:func:`command_marker` in it) or a new one, never a folder of the user's (its files would be
  replaced).
- :func:`json_text`: the text of every JSON file a run, a sweep or a tune writes, strict JSON.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import unicodedata
from collections.abc import Collection
from pathlib import Path
from typing import Any

MARKER = '.wheelsim-run'
#: The folders a run makes whole (the bag's writer creates the bag folder itself): a file of
#: another name there stops ``--overwrite`` before anything is removed.
WHOLE_FOLDERS = ('bag',)
SUBFOLDERS = ('bag', 'plots')
"""The folders a run may write in its folder: its bag, its plots."""
MAX_NUMBERED = 10_000
#: Unicode categories a run's name may not hold: control characters, invisible format characters
#: (a zero-width space makes ``default\u200b`` look like ``default``; U+202E shows the rest of a
#: line reversed), line and paragraph separators.
INVISIBLE = ('Cc', 'Cf', 'Zl', 'Zp')
#: The format characters that are parts of words, taken between two visible characters:
#: zero-width non-joiner and joiner (Persian words, emoji sequences), soft hyphen.
WORD_FORMAT = frozenset('\u200c\u200d\u00ad')
#: The longest scenario name [bytes of UTF-8]: a folder name (Linux allows 255 bytes) with room
#: for the numbered runs' ``-10000`` and a sweep point's suffix.
MAX_NAME_BYTES = 200
ERROR_FILE = 'error.txt'
"""Where a run that raised keeps the traceback, in its output folder."""


class OutputError(ValueError):
    """An output folder that cannot be used safely; the message says why."""


def _visible(c: str) -> bool:
    return not c.isspace() and unicodedata.category(c) not in INVISIBLE


def _inside_a_word(name: str, index: int) -> bool:
    """Whether ``name[index]`` is one of :data:`WORD_FORMAT` between two visible characters."""
    return (name[index] in WORD_FORMAT and 0 < index < len(name) - 1
            and _visible(name[index - 1]) and _visible(name[index + 1]))


def check_run_name(name: object) -> str:
    """``name`` if it is a safe single path component; OutputError otherwise."""
    if not isinstance(name, str) or not name:
        raise OutputError(f'{name!r} must be a non-empty string')
    if name in ('.', '..'):
        raise OutputError(f'{name!r} is not a folder name (it would point outside the run folder)')
    bad = [c for i, c in enumerate(name) if c in ('/', '\\', os.sep)
           or (unicodedata.category(c) in INVISIBLE and not _inside_a_word(name, i))]
    if bad:
        raise OutputError(f'{name!r} must not contain path separators, control or invisible '
                          f'format characters (found {"".join(sorted(set(bad)))!r})')
    if name != name.strip():
        raise OutputError(f'{name!r} must not start or end with a space (a folder name that '
                          'looks like another)')
    size = len(name.encode('utf-8', 'surrogateescape'))
    if size > MAX_NAME_BYTES:
        raise OutputError(f'must be at most {MAX_NAME_BYTES} bytes in UTF-8 (a folder name; this '
                          f'one has {size})')
    return name


def run_files() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """What a run writes into its folder: (folder or '', file names or patterns); in
    ``plots/`` the report's figures by name (a user's own PNG there stays)."""
    from wheelsim.report.plots import PAGE_NAMES, PDF_NAME

    return (('', ('metrics.json', 'timing.json', ERROR_FILE, MARKER)),
            ('bag', ('*.mcap', 'metadata.yaml')),
            ('plots', (*(f'{name}.png' for name in PAGE_NAMES), PDF_NAME)))


def _run_paths(folder: Path) -> list[Path]:
    """What in ``folder`` a run writes (:func:`run_files`): the folders and files there now,
    symbolic links (also broken ones) included."""
    paths = []
    for sub, patterns in run_files():
        place = folder / sub if sub else folder
        if sub:
            paths.append(place)
        if place.is_dir() and not place.is_symlink():
            paths += [path for pattern in patterns for path in (
                place.glob(pattern) if '*' in pattern else [place / pattern])]
    return paths


def _remove_run_files(folder: Path, writes: Collection[str], inputs: Collection[Path]) -> None:
    """Remove what an earlier run wrote into ``folder``; every other file stays. Where this run
    writes (``writes``: of :data:`SUBFOLDERS`, and the folder's own files), a symbolic link is
    refused (the run would write through it, outside the folder), as is a file where it writes
    a folder or the reverse, a file of another name in a folder it makes whole, a sweep's or a
    tune's folder (:func:`command_marker`) where it writes one, and one of the files the run
    reads (``inputs``: its scenario, params file, map)."""
    if not (folder / MARKER).is_file():
        raise OutputError(f'{folder} was not written by wheelsim run (no {MARKER}): '
                          'not overwriting it; choose another --output or scenario name')
    unwritten = [folder / sub for sub in SUBFOLDERS if sub not in writes]
    paths = [path for path in _run_paths(folder)  # where this run writes
             if path not in unwritten and path.parent not in unwritten]
    read = {path.resolve() for path in inputs}
    taken = [path for path in paths if path.resolve() in read]
    if taken:
        raise OutputError(f'{taken[0]} is read by this run (its scenario, params_file or map) '
                          'and a run writes there: not overwriting it; move it or choose '
                          'another --output')
    links = [path for path in paths if path.is_symlink()]
    if links:
        raise OutputError(f'{links[0]} is a symbolic link where a run writes: not writing '
                          'through it; remove it or choose another --output')
    subfolders = [folder / sub for sub in SUBFOLDERS]
    for sub in writes:  # a sweep's or a tune's folder (its --study named like one): theirs
        marker = next((folder / sub / command_marker(command) for command in _OWN_FILES
                       if (folder / sub / command_marker(command)).is_file()), None)
        if marker is not None:
            raise OutputError(f'{folder / sub} is a wheelsim {marker.name[len(".wheelsim-"):]} '
                              f'folder ({marker.name}), where a run writes its {sub}: not '
                              'writing into it; choose another --output')
    for path in paths:  # of another kind than this run writes there
        if path.exists() and path.is_dir() != (path in subfolders):
            kinds = ('a file', 'a folder') if path in subfolders else ('a folder', 'a file')
            raise OutputError(f'{path} is {kinds[0]} where a run writes {kinds[1]}: not '
                              'overwriting; move it or choose another --output')
    others = sorted(path for sub in WHOLE_FOLDERS if sub in writes and (folder / sub).is_dir()
                    for path in (folder / sub).iterdir() if path not in paths)
    if others:
        raise OutputError(f'{others[0]}: a run makes {others[0].parent.name}/ whole and does not '
                          'write this: not overwriting; move it or choose another --output')
    for sub, patterns in run_files():
        place = folder / sub if sub else folder
        if sub and (place.is_symlink() or not place.is_dir()):
            continue
        for pattern in patterns:
            for path in place.glob(pattern):
                if path.is_file() and not path.is_symlink():
                    path.unlink()
        if sub and not any(place.iterdir()):
            place.rmdir()


def run_folder(output_root: Path, name: str, overwrite: bool = False,
               writes: Collection[str] = SUBFOLDERS, inputs: Collection[Path] = ()) -> Path:
    """The folder of a new run of ``name`` in ``output_root``, created (see the module doc);
    ``writes``: the folders of :data:`SUBFOLDERS` this run writes (with ``overwrite``, a file or
    folder of another kind than the run writes in one of them, or in its place, is refused; in
    one it does not write, left alone); ``inputs``: the files the run reads (with
    ``overwrite``, one where a run writes is refused)."""
    root = Path(output_root).resolve()
    folder = root / check_run_name(name)  # one component: directly inside the root
    root.mkdir(parents=True, exist_ok=True)
    if overwrite and (folder.exists() or folder.is_symlink()):
        if folder.is_symlink() or not folder.is_dir():
            raise OutputError(f'{folder} is not a plain folder: not overwriting it')
        _remove_run_files(folder, writes, inputs)
    else:
        for number in range(2, MAX_NUMBERED):
            if not folder.exists() and not folder.is_symlink():
                break
            folder = root / f'{name}-{number}'
        else:
            raise OutputError(f'{root}: {MAX_NUMBERED} runs named {name} already')
    try:
        folder.mkdir(exist_ok=overwrite)
        (folder / MARKER).write_text('written by wheelsim run; --overwrite removes only its own '
                                     'files from this folder\n')
    except OSError as err:
        raise _cannot_create(folder, err) from None
    return folder


def discard_unwritten(folder: Path) -> None:
    """Remove ``folder`` (made by :func:`run_folder`) if it holds nothing but its marker: a run
    stopped before it wrote anything leaves no folder to number the next one past. A folder
    with anything else in it (``--overwrite`` kept a user's file there) stays as it is."""
    if [path.name for path in folder.iterdir()] == [MARKER]:
        (folder / MARKER).unlink()
        folder.rmdir()


def _cannot_create(folder: Path, err: OSError) -> OutputError:
    """The error for an output folder that cannot be made (a folder the user may not write
    in, a read-only file system): bad input, named as such before anything runs."""
    return OutputError(f'{folder}: cannot create it ({err.strerror or err}): choose another '
                       '--output')


def command_marker(command: str) -> str:
    """The file that says ``wheelsim <command>`` (sweep, tune) made a folder."""
    return f'.wheelsim-{command}'


#: What a sweep's or a tune's folder made before :func:`command_marker` holds besides its
#: ``runs/``: with both, it is theirs.
_OWN_FILES = {'sweep': 'sweep.csv', 'tune': 'study.db'}


def check_command_folder(folder: Path, command: str) -> None:
    """OutputError unless ``wheelsim <command>`` may write into ``folder`` (see
    :func:`command_folder`); nothing is created."""
    folder = Path(folder)
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise OutputError(f'{folder} is not a plain folder: not writing the {command} there; '
                          'choose another --output')
    blocking = next((parent for parent in folder.parents
                     if parent.exists() and not parent.is_dir()), None)
    if blocking is not None:
        raise OutputError(f'{blocking} is a file, where the {command} needs a folder: choose '
                          'another --output or scenario name')
    if not folder.is_dir() or (folder / command_marker(command)).is_file() \
            or not any(folder.iterdir()):
        return
    other = next((other for other in _OWN_FILES
                  if (folder / command_marker(other)).is_file()), None)
    if other is None and (folder / _OWN_FILES[command]).is_file() and (folder / 'runs').is_dir():
        return  # made before the marker
    maker = f'made by wheelsim {other}' if other else 'not written by wheelsim ' + command
    raise OutputError(f'{folder} was {maker} (no {command_marker(command)}): not replacing its '
                      'files; choose another --output')


#: The command folders this process writes: resolved path -> its locked marker, open.
_LOCKED: dict[Path, Any] = {}


def command_folder(folder: Path, command: str) -> Path:
    """``folder``, where ``wheelsim <command>`` writes and a rerun resumes, created with its
    :func:`command_marker`: an existing one must be one it made (the marker, or, made before
    the marker, its ``runs/`` and its table or study file) or empty. OutputError otherwise
    (another command's folder, a user's), for a symbolic link or a file there, and while
    another process writes it: the marker stays locked (``flock``) until this process ends."""
    check_command_folder(folder, command)
    folder = Path(folder)
    marker = folder / command_marker(command)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not marker.is_file():
            marker.write_text(f'written by wheelsim {command}; the same command resumes it '
                              'here\n')
    except OSError as err:
        raise _cannot_create(folder, err) from None
    key = folder.resolve()
    if key not in _LOCKED:
        handle = marker.open('rb')  # noqa: SIM115 - open as long as the process writes there
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise OutputError(f'{folder} is being written by another wheelsim {command}: wait '
                              'for it to end, or choose another --output') from None
        _LOCKED[key] = handle
    return folder


def counted(count: int, noun: str) -> str:
    """``1 run``, ``2 runs``, ``0 runs``: a count the command prints, with its noun."""
    return f'{count} {noun}' + ('' if count == 1 else 's')


def json_text(document: Any) -> str:
    """``document`` as the text of a JSON file wheelsim writes (``metrics.json``,
    ``timing.json``, a sweep point's or tune trial's ``point.json``): indented by 2, keys
    sorted, a newline at the end, and strict JSON: every non-finite float (NaN, infinities, as
    in a waypoint array's ``.nan``), which JSON cannot spell, is ``null``, in nested dicts,
    lists and tuples too, so that strict readers (jq, JavaScript's ``JSON.parse``) take it.
    ``null`` is also a metric the run could not compute (:mod:`wheelsim.report.metrics` makes a
    non-finite metric None), so readers take both as "no value"."""
    return json.dumps(_finite_or_none(document), indent=2, sort_keys=True,
                      allow_nan=False) + '\n'


def _finite_or_none(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite_or_none(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_none(item) for item in value]
    return value
