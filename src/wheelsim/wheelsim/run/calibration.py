"""``wheelsim calibrate BAG``: read the recording, check it, fit, write the params file, the
report and the plot (the fitting math is :mod:`wheelsim.core.calibration`)."""

from __future__ import annotations

import math
import os
import stat
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from wheelsim.core.calibration.excitation import Step
from wheelsim.core.calibration.fit import calibrate, drive_group, initial_parameters
from wheelsim.core.calibration.recording import (
    FIT_GEOMETRY,
    CalibrationError,
    Recording,
    check_excitation,
    fit_geometry,
    geometry_for_fit,
)
from wheelsim.core.params import ParameterError
from wheelsim.core.vehicle_sim.config import VehicleSimSettings
from wheelsim.report.calibration_bag import load_recording
from wheelsim.report.calibration_report import (
    PARAMS_FILE_MARK,
    format_report,
    path_text,
    plot_response,
    write_params,
)
from wheelsim.run.held_signals import HeldSignals
from wheelsim.run.scenario import ScenarioError, check_node_parameters, params_file_sections


@dataclass(frozen=True)
class CalibrationOutputs:
    params: Path
    report_path: Path
    plot: Path
    report: str


def _vehicle_sim_parameters(path: Path) -> dict[str, Any]:
    """The vehicle_sim parameters (dotted names) of the ROS params file ``path``, read and
    checked as ``wheelsim run`` reads and checks a scenario's ``params_file`` for vehicle_sim:
    CalibrationError ``--params PATH: <key>: <what is allowed>`` otherwise, or when the file
    sets no vehicle_sim parameter."""
    from wheelsim.run.runner import node_parameter_checks, node_parameter_specs

    source = f'--params {path}'
    specs = node_parameter_specs()
    try:
        values = params_file_sections(path, specs, source)['vehicle_sim']
        check_node_parameters(source, '', 'vehicle_sim', values, specs['vehicle_sim'],
                              node_parameter_checks()['vehicle_sim'])
    except ScenarioError as err:
        raise CalibrationError(str(err)) from None
    if not values:
        raise CalibrationError(f'{source}: sets no vehicle_sim parameter (give a vehicle_sim '
                               'params file, e.g. a preset)')
    return values


def _bag_model(recording: Recording) -> str | None:
    """The model whose wheels the recording's joint names are, or None without joints."""
    names = recording.wheel_names
    if any(n.startswith('fixed') for n in names):
        return 'bicycle'
    if any(n.startswith('front') for n in names):
        return 'omni'
    return 'differential' if names else None


def _shown(value: Any) -> str:
    """An option's or a params file's value in an error: a float as ``%g`` (1000, not 1000.0)."""
    return f'{value:g}' if isinstance(value, float) else str(value)


def _option_or_file(option: str, given: Any, key: str, params: dict[str, Any],
                    params_file: Path | None) -> Any:
    """``given`` (the value of the command-line ``option``), else the ``--params`` file's
    ``key``, else None. CalibrationError naming both when both are given and differ: one would
    override the other silently."""
    in_file = params.get(key)
    if given is not None and in_file is not None and given != in_file:
        raise CalibrationError(f'{option} {_shown(given)}: the --params file {params_file} '
                               f'sets {key} {_shown(in_file)}: give one of them')
    return given if given is not None else in_file


def _model(given: str | None, recording: Recording, params: dict[str, Any],
           params_file: Path | None) -> str:
    """The vehicle model: ``--model`` (``given``) or the ``--params`` file's ``model``, and the
    model the bag's joint names show, whichever are given, else differential. CalibrationError
    naming both when two of them differ: one would override the other silently."""
    model = _option_or_file('--model', given, 'model', params, params_file)
    shown = _bag_model(recording)
    if model and shown and model != shown:
        setting = f'--model {model}' if given else f'--params {params_file}: model {model}'
        raise CalibrationError(
            f'{setting}: the bag\'s joint_states name the wheels of the {shown} model '
            f'({", ".join(recording.wheel_names)}), not of the {model} model: give the {shown} '
            f'model, or a bag of the {model} vehicle')
    return model or shown or 'differential'


def calibrate_bag(bag: str | os.PathLike, output: str | os.PathLike, model: str | None = None,
                  params_file: Path | None = None, cmd_topic: str | None = None,
                  measured_topic: str | None = None, joint_states_topic: str | None = None,
                  step_rate_hz: float | None = None, overwrite: bool = False
                  ) -> CalibrationOutputs:
    """Fit and write ``output`` (params), ``<stem>_report.txt`` and ``<stem>_response.png``,
    simulating at ``step_rate_hz`` (default: the ``params_file``'s ``step_rate``, else
    vehicle_sim's default). The texts name a path's bytes that are not UTF-8 as ``\\xNN``.
    CalibrationError when the bag cannot be calibrated (says what to record), and, before any
    work, when ``output`` is or names a folder (``out/``, ``out/..``), is below a file or a link
    to nothing, another of the three files is a folder, one of them would be written into a
    folder this process may not write (or search), or would replace another user's file in a
    sticky folder, a name is too long, one of them exists and not ``overwrite``, or one of them
    is the bag or lies in its folder (even with ``overwrite``), or ``output`` is the
    ``params_file`` or an existing file an earlier calibration did not write (even with
    ``overwrite``); and, before
    the fit, when ``params_file`` is not a valid vehicle_sim params file, or ``model``, its
    model and the bag's joint names do not agree, or ``step_rate_hz`` and its step_rate
    differ."""
    if not os.fspath(bag):
        raise CalibrationError("BAG '': an empty name; give the bag folder or its file")
    if step_rate_hz is not None and not 1.0 <= step_rate_hz <= 100_000.0:
        raise CalibrationError(f'--step-rate {step_rate_hz:g}: must be in [1, 100000] Hz')
    output, report_path, plot_path = _check_outputs(os.fspath(output), overwrite)
    _check_apart_from_bag(output, (output, report_path, plot_path), Path(bag))
    _check_not_users_file(output, params_file)
    started = time.process_time()
    params = _vehicle_sim_parameters(params_file) if params_file else {}
    recording, topics = load_recording(bag, cmd_topic, measured_topic, joint_states_topic)
    model = _model(model, recording, params, params_file)
    given_rate_hz = step_rate_hz
    step_rate_hz = _option_or_file('--step-rate', step_rate_hz, 'step_rate', params,
                                   params_file) or VehicleSimSettings().step_rate
    step_rate_setting = (f'--step-rate {step_rate_hz:g}' if given_rate_hz is not None else
                         f'--params {path_text(params_file)}: step_rate {step_rate_hz:g}'
                         if 'step_rate' in params else f'the default step rate {step_rate_hz:g} Hz')
    prefix = f'model_params.{model}.'
    given = {k[len(prefix):]: v for k, v in params.items() if k.startswith(prefix)}
    base = dict(given)
    check_excitation(recording, model)
    tyre_slip = model == 'bicycle' and given.get('dynamics.enabled') is True
    if tyre_slip and 'wheel_base' not in given:
        raise CalibrationError(
            f'--params {path_text(params_file)}: model_params.bicycle.wheel_base: not given; the '
            'dynamic bicycle (dynamics.enabled true) slips sideways, so joint_states do not give '
            'it: give it in the file')
    geometry = fit_geometry(recording, model, tyre_slip)
    measured = geometry_for_fit(model, geometry, base)
    held = {key: base[key] for key in FIT_GEOMETRY[model] if key in base and key not in measured}
    compared = {key: (base[key], value) for key, value in measured.items() if key in base}
    if 'lever' in geometry and len(compared) == 2:  # the omni: its file's lever, the bag's
        compared = {'lever': tuple((a + b) / 2.0 for a, b in zip(*compared.values(),
                                                                  strict=True))}
    replaced = {key: values for key, values in compared.items()  # as the report shows them
                if f'{values[0]:.5g}' != f'{values[1]:.5g}'}
    base.update(measured)
    try:
        result = calibrate(recording, model, base, 1.0 / step_rate_hz)
    except CalibrationError as err:
        raise CalibrationError(f'{err}{_coarse_steps(recording, step_rate_hz, step_rate_setting)}'
                               f'{_what_the_fit_held(recording, model, given, held, params_file)}'
                               ) from None
    except ValueError as err:
        raise CalibrationError(f'the vehicle parameters are invalid: {err}') from None
    seconds = time.process_time() - started
    source = f'{path_text(bag)} (commands {topics.commands}, measured {topics.measured}' + (
        f', joints {topics.joint_states})' if topics.joint_states else ')')
    report = format_report(result, geometry, recording, source, seconds, held, replaced,
                           measured if 'lever' in geometry else None)
    output.parent.mkdir(parents=True, exist_ok=True)
    write_together([
        (output, lambda path: write_params(result, geometry, path, step_rate_hz,
                                           name=output.name, held=given | measured)),
        (report_path, lambda path: path.write_text(report)),
        (plot_path, lambda path: plot_response(result, recording, path))])
    return CalibrationOutputs(output, report_path, plot_path, report)


def _coarse_steps(recording: Recording, step_rate_hz: float, setting: str) -> str:
    """What a failed fit adds when its simulation steps less often than the recording was
    sampled (``setting``: the option or file line that gave ``step_rate_hz``): motion faster
    than a step cannot be fitted, whatever was recorded. Empty otherwise."""
    sample_s = float(np.median(np.diff(recording.measured_t_s)))
    # the samples' stamps are whole nanoseconds: 30 Hz samples are 33 333 333 ns apart
    if not sample_s > 0 or step_rate_hz * sample_s >= 1.0 - SAMPLE_RATE_TOLERANCE:
        return ''
    resolving_hz = math.ceil(1.0 / sample_s * (1.0 - SAMPLE_RATE_TOLERANCE))
    return (f' ({setting}: the fit simulates a step every {1e3 / step_rate_hz:.4g} ms, longer '
            f'than the {1e3 * sample_s:.4g} ms between the recorded samples: motion within a '
            f'step cannot be fitted; a step rate of at least {resolving_hz} Hz '
            'resolves the recording, vehicle_sim\'s default is 1000 Hz)')


def _what_the_fit_held(recording: Recording, model: str, given: dict[str, Any],
                       geometry: dict[str, float], params_file: Path | None) -> str:
    """What a failed fit adds: what it held instead of fitting, which a recorded vehicle that
    differs cannot be matched with however it was driven. From the params file (``given``:
    its parameters below ``model_params.<model>``): actuator values the fit does not fit (a
    jerk limit, a dead band) and the ``geometry`` it took from there; where the file gives
    none, it takes none of a deceleration limit of its own, a jerk limit, a dead band, (a
    bicycle) a steering dead band and (a differential) wheel slip."""
    fitted = {parameter.key for parameter in initial_parameters(recording, model)}
    from_file = [f'{key} {_shown(value)}' for key, value in given.items()
                 if '_actuator' in key.split('.', 1)[0] and key not in fitted]
    from_file += [f'{key} {_shown(value)} m' for key, value in geometry.items()]
    group = drive_group(model)
    unfitted = {'a deceleration limit apart from the acceleration limit':
                [f'{group}.max_deceleration'], 'a jerk limit': [f'{group}.max_jerk'],
                'a dead band': [f'{group}.dead_band']}
    if model == 'bicycle':
        unfitted['a steering dead band'] = ['steering_actuator.dead_band']
    if model == 'differential':
        unfitted['wheel slip'] = ['slip_left', 'slip_right']
    none_of = [text for text, keys in unfitted.items() if not any(key in given for key in keys)]
    held = [f'from --params {path_text(params_file)}: {", ".join(from_file)}'] if from_file \
        else []
    held += [f'none of: {", ".join(none_of)}'] if none_of else []
    return (' (if the recording has these motions, the recorded vehicle differs from what the '
            f'fit held: {"; ".join(held)}; give its values with --params)')


#: The relative difference within which a step rate counts as the samples' rate.
SAMPLE_RATE_TOLERANCE = 1e-6


def _check_outputs(given: str, overwrite: bool) -> tuple[Path, Path, Path]:
    """The params file's, report's and plot's paths of ``-o given``, once the three files can
    be written (:func:`calibrate_bag`'s checks before any work); CalibrationError naming
    ``-o given`` otherwise, also for a folder that cannot be searched or a name too long."""
    output = Path(given)  # (drops a closing '/')
    try:
        if not given:
            raise CalibrationError("-o '': an empty name; give the params file to write "
                                   '(e.g. -o calibration/params.yaml)')
        if os.path.basename(given) in ('', os.curdir, os.pardir) or os.path.isdir(output):
            raise CalibrationError(f'-o {given}: is a folder; give the params file to write '
                                   '(e.g. -o calibration/params.yaml)')
        report_path = output.with_name(output.stem + '_report.txt')
        plot_path = output.with_name(output.stem + '_response.png')
        _check_name_lengths(output, (output, report_path, plot_path))  # also the folders
        folders = [str(p) for p in (report_path, plot_path) if p.is_dir()]
        if folders:
            raise CalibrationError(f'-o {output}: {folders[0]} is a folder, where the calibration '
                                   'writes a file: move it or give another -o')
        for path in (output, report_path, plot_path):
            try:
                path.resolve()
            except (RuntimeError, OSError):  # Python 3.11: RuntimeError for a loop
                raise CalibrationError(f'-o {output}: {path} is a loop of symbolic links') from None
        existing = [str(p) for p in (output, report_path, plot_path) if p.exists()]
        if existing and not overwrite:
            verb = 'exists' if len(existing) == 1 else 'exist'
            raise CalibrationError(f'-o {output}: {", ".join(existing)} {verb}: not overwriting '
                                   '(give another -o, or --overwrite)')
        _check_write_targets(output, (output, report_path, plot_path))
    except OSError as err:  # a folder without search permission, say
        folder = _unsearchable_folder(Path(err.filename or output))
        if folder is not None:
            raise _cannot_search(output, folder) from None
        raise CalibrationError(f'-o {output}: {err.filename}: {err.strerror}') from None
    return output, report_path, plot_path


def _check_apart_from_bag(output: Path, paths: Sequence[Path], bag: Path) -> None:
    """CalibrationError naming ``-o output`` if one of ``paths`` is the bag being calibrated
    (a bag file, or its folder's ``metadata.yaml``) or lies inside its folder: the folder
    given, or the one holding the bag file given if that folder is a bag (has a
    ``metadata.yaml``; a bare bag file's folder is any folder)."""
    bag_path = bag.resolve()
    bag_folder = bag_path if bag_path.is_dir() else bag_path.parent
    is_bag_folder = bag_path.is_dir() or (bag_folder / 'metadata.yaml').is_file()
    for path in paths:
        target = path.resolve()
        if target == bag_path or target == bag_folder / 'metadata.yaml':
            raise CalibrationError(f'-o {output}: {path} is the bag being calibrated: give '
                                   'another -o')
        if is_bag_folder and bag_folder in target.parents:
            raise CalibrationError(f'-o {output}: {path} is inside the bag being calibrated, '
                                   f'{bag_folder if bag_path.is_file() else bag}: give another '
                                   '-o')


def _check_not_users_file(output: Path, params_file: Path | None) -> None:
    """CalibrationError naming ``-o output`` if it is the ``--params`` file the calibration
    reads, or an existing file that does not begin as a calibration's params file does
    (:data:`PARAMS_FILE_MARK`): ``--overwrite`` replaces an earlier calibration's output only."""
    if params_file is not None and output.resolve() == Path(params_file).resolve():
        raise CalibrationError(f'-o {output}: is the --params file the calibration reads: give '
                               'another -o (the fitted file holds the vehicle_sim parameters '
                               'only)')
    if not output.is_file():
        return
    try:
        with output.open('rb') as file:
            written_here = file.read(len(PARAMS_FILE_MARK)) == PARAMS_FILE_MARK.encode()
    except OSError as err:
        raise CalibrationError(f'-o {output}: {err.strerror}') from None
    if not written_here:
        raise CalibrationError(f'-o {output}: was not written by wheelsim calibrate (it does not '
                               f'begin "{PARAMS_FILE_MARK}"): not overwriting; give another -o')


def _cannot_search(output: Path, folder: Path) -> CalibrationError:
    """The error of ``-o output`` in (or linked into) ``folder``, which cannot be searched."""
    return CalibrationError(f'-o {output}: the folder {folder} cannot be searched here '
                            '(no x permission)')


def _unsearchable_folder(path: Path) -> Path | None:
    """The first folder on the way to ``path`` this process may not search, if any."""
    for folder in reversed(path.absolute().parents):
        if os.path.isdir(folder) and not os.access(folder, os.X_OK):
            return folder
    return None


def _check_name_lengths(output: Path, paths: Sequence[Path]) -> None:
    """CalibrationError when a name of ``paths`` to be made (a file's, a missing folder's) is
    longer than the file system takes (in bytes)."""
    for path in paths:
        folder = _nearest_folder(output, path)
        try:
            most = os.pathconf(folder, 'PC_NAME_MAX')
        except (OSError, ValueError):
            most = NAME_MAX_BYTES
        made = [path, *[p for p in path.absolute().parents if not os.path.exists(p)]]
        for name in (p.name for p in made):
            if len(os.fsencode(name)) > most:
                raise CalibrationError(f'-o {output}: the name {name} is longer than this '
                                       f'file system takes ({most} bytes)')


def _nearest_folder(output: Path, path: Path) -> Path:
    """The nearest existing folder of ``path``, where its missing folders would be made.
    CalibrationError (naming ``-o output``) when that is a file, or a missing folder on the way
    is a link to nothing (no folder can be made there)."""
    for folder in path.absolute().parents:  # (os.path's: False for a name too long)
        if os.path.exists(folder):
            break
        if os.path.islink(folder):  # exists() follows it
            try:
                target = folder.resolve()
            except (RuntimeError, OSError):  # Python 3.11: RuntimeError for a loop
                raise CalibrationError(f'-o {output}: {folder} is a loop of symbolic '
                                       'links') from None
            unsearchable = _unsearchable_folder(target)
            if unsearchable is not None:  # its target may exist: nothing can tell
                raise _cannot_search(output, unsearchable)
            raise CalibrationError(f'-o {output}: {folder} links to {target}, which does not '
                                   'exist')
    if not folder.is_dir():
        raise CalibrationError(f'-o {output}: {folder} is a file, not a folder')
    return folder


PART_SUFFIX = '.part'
"""The ending of a file being written, before it is put in place."""
NAME_MAX_BYTES = 255
"""The longest file name most file systems take, where the system does not say."""
CAP_FOWNER = 3
"""Linux's capability to act as the owner of any file (root's, unless dropped)."""


def _may_replace(folder: Path, target: Path) -> bool:
    """Whether this process may replace ``target`` in ``folder``, which it may write: in a
    sticky folder (/tmp's mode), only the file's or the folder's owner may, or a process with
    CAP_FOWNER (read from /proc; without it, root is taken to have it)."""
    if not folder.stat().st_mode & stat.S_ISVTX:
        return True
    if os.geteuid() in (folder.stat().st_uid, target.stat().st_uid):
        return True
    try:
        with open('/proc/self/status') as status:
            effective = next(line for line in status if line.startswith('CapEff:'))
        return bool(int(effective.split()[1], 16) >> CAP_FOWNER & 1)
    except (OSError, StopIteration):
        return os.geteuid() == 0


def _check_write_targets(output: Path, paths: Sequence[Path]) -> None:
    """CalibrationError when one of ``paths`` is a link into a folder that does not exist (or
    is a file), would be written into a folder this process may not write, or two of them are,
    or lead to, the same file: the fit would run for nothing, or one file would replace
    another."""
    seen: dict[Path, Path] = {}
    for path in paths:
        target = path.resolve()
        if not path.is_symlink():
            folder = _nearest_folder(output, path)
        elif target.parent.is_dir():  # written through the link
            folder = target.parent
        else:
            what = 'is a file' if target.parent.exists() else 'does not exist'
            raise CalibrationError(f'-o {output}: {path} links to {target}, whose folder '
                                   f'{target.parent} {what}')
        if not os.access(folder, os.W_OK | os.X_OK):
            raise CalibrationError(f'-o {output}: {path} is written into {folder}, which is '
                                   'not writable here')
        if target.exists() and not _may_replace(folder, target):
            raise CalibrationError(f'-o {output}: {target} belongs to another user in the '
                                   f'sticky folder {folder}: only its owner or the folder\'s '
                                   'may replace it')
        if target in seen:
            raise CalibrationError(f'-o {output}: {seen[target]} and {path} are the same file '
                                   f'({target}): the calibration writes three files')
        seen[target] = path


def write_together(files: Sequence[tuple[Path, Callable[[Path], object]]]) -> None:
    """Write each of ``files`` (its path, and what writes it to a given path) beside it under
    a new name, then put them all in place, so that a failed or interrupted write leaves none of
    them (a part of a set, which the next run would refuse or misread) and keeps the files
    written before: a file that cannot be put in place puts back those put before it (a file no
    hard link can keep aside stays replaced; a new one is removed). A link is
    written through; a file keeps its permissions (a new one gets a new file's). OSError names
    the path that could not be written, and each earlier file that could not be put back either
    and the name it is kept under (never removed)."""
    parts: list[Path] = []
    kept: dict[Path, Path] = {}  # a file to be replaced -> a second name of it, until the end
    new: set[Path] = set()  # the targets no file had
    path = files[0][0]
    try:
        targets = []
        for path, write in files:
            target = path.resolve()
            # a short name, whatever the file's: within the file system's limit
            handle, part = tempfile.mkstemp(suffix=PART_SUFFIX, prefix='.wheelsim-calibrate-',
                                            dir=target.parent)
            parts.append(Path(part))
            os.close(handle)
            write(parts[-1])
            try:  # after writing: the mode may forbid it (a 0444 file)
                os.chmod(parts[-1], _file_mode(target))  # mkstemp's is 0600
            except OSError:  # a file system without permissions: as it gives them
                pass
            targets.append(target)
        with HeldSignals():
            for target in targets:
                if not target.exists():
                    new.add(target)
                elif (second := _second_name(target)) is not None:
                    kept[target] = second
            placed = []
            try:
                for (given, _), part, target in zip(files, parts, targets, strict=True):
                    path = given
                    os.replace(part, target)
                    placed.append(target)
            except OSError as err:
                not_put_back = _put_back(placed, kept, new)
                if not_put_back:
                    raise OSError(err.errno, f'{err.strerror} ({not_put_back})') from None
                raise
    except OSError as err:
        raise OSError(err.errno, err.strerror, str(path)) from None
    finally:
        for extra in [*parts, *kept.values()]:
            extra.unlink(missing_ok=True)


def _put_back(placed: Sequence[Path], kept: dict[Path, Path], new: set[Path]) -> str:
    """Each of ``placed`` as it was: its earlier file from its second name in ``kept``
    (popped), or none if it is in ``new``. Every one is tried; an earlier file that cannot be
    put back stays under its second name (popped too, so that it is not removed). Returns what
    could not be put back, for an error message ('' if all were)."""
    failed = []
    for target in placed:
        try:
            if target in kept:
                os.replace(kept[target], target)
                del kept[target]
            elif target in new:
                target.unlink(missing_ok=True)
        except OSError as err:
            where = f'the earlier file is {kept.pop(target)}' if target in kept else 'left new'
            failed.append(f'{target} not put back: {err.strerror}; {where}')
    return '; '.join(failed)


def _second_name(path: Path) -> Path | None:
    """A new hard link to the file at ``path``, beside it under a new name: the file as it is,
    whatever replaces ``path``; None if none can be made there (a file system that cannot link,
    no name left in the folder): the file is then not put back."""
    try:
        handle, name = tempfile.mkstemp(suffix='.old', prefix='.wheelsim-calibrate-',
                                        dir=path.parent)
        os.close(handle)
        os.unlink(name)  # a name no other file has; os.link makes it again
        os.link(path, name)
    except OSError:
        return None
    return Path(name)


def _file_mode(path: Path) -> int:
    """The permissions of the file at ``path``, or those a new file gets here."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


#: What :func:`record_excitation_bag` sets of vehicle_sim's parameters.
RECORDING_PARAMETERS = {'use_sim_time': True, 'cmd_vel_type': 'twist_stamped'}


def record_excitation_bag(bag_dir: Path, parameters: dict[str, Any], steps: Sequence[Step],
                          command_rate_hz: float = 20.0) -> None:
    """Drive vehicle_sim through ``steps`` in lock-step in this process, a driver sending each
    held command as TwistStamped at ``command_rate_hz``, and record every topic into the new
    bag folder ``bag_dir`` (MCAP): a recording ``wheelsim calibrate`` takes, with known
    parameters (vehicle_sim's, dotted names). Raises ParameterError, before the folder is
    made, for parameters vehicle_sim refuses, and for the two the recording sets itself
    (``use_sim_time`` true: it follows the recording's clock, so ``be_reference_clock`` must be
    false; ``cmd_vel_type`` twist_stamped) given otherwise."""
    from geometry_msgs.msg import TwistStamped

    from wheelsim.nodes.vehicle_sim import VehicleSim, check_parameters
    from wheelsim.ros import qos
    from wheelsim.ros.conversions import time_msg
    from wheelsim.run.lockstep import Lockstep
    from wheelsim.run.recording import BagRecorder
    from wheelsim.run.runner import START_TIME_NS

    ends_ns = START_TIME_NS + np.cumsum([round(hold_s * 1e9) for hold_s, _ in steps])

    def excitation(seam) -> None:
        """The driver: the held command of ``steps`` at every period."""
        publisher = seam.create_publisher(TwistStamped, 'cmd_vel', qos.DEFAULT)
        message = TwistStamped()

        def send() -> None:
            now_ns = seam.now_ns()
            index = min(int(np.searchsorted(ends_ns, now_ns, side='right')), len(steps) - 1)
            vx, vy, wz = steps[index][1]
            time_msg(now_ns, message.header.stamp)
            message.twist.linear.x, message.twist.linear.y = vx, vy
            message.twist.angular.z = wz
            publisher.publish(message)

        seam.create_timer(1.0 / command_rate_hz, send)

    excitation.name = 'excitation'
    values = {**parameters, **RECORDING_PARAMETERS}
    for name, value in RECORDING_PARAMETERS.items():
        if parameters.get(name, value) != value:
            raise ParameterError(name, parameters[name], f'the recording sets it to {value}')
    if values.get('be_reference_clock'):
        raise ParameterError('be_reference_clock', True, 'must be false: the recorded '
                             "vehicle_sim follows the recording's clock (use_sim_time)")
    check_parameters(values)
    offered_qos: dict[str, list[Any]] = {}  # the publishers' QoS profiles, for the bag
    topic_types: dict[str, type] = {}  # the topics published on, for the bag
    with BagRecorder(bag_dir, offered_qos=offered_qos, topic_types=topic_types) as recorder:
        lockstep = Lockstep(recorder.record, START_TIME_NS, offered_qos, topic_types)
        lockstep.add(VehicleSim, values)
        lockstep.add(excitation, {})
        lockstep.run_until(int(ends_ns[-1]))
