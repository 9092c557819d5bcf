"""What ``wheelsim calibrate`` writes: the params file vehicle_sim takes, the report with the
confidence intervals, and the plot of measured against simulated response."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wheelsim.core import yaml_numbers
from wheelsim.core.calibration.fit import CHANNEL_UNITS, Calibration
from wheelsim.core.calibration.recording import Estimate, Recording
from wheelsim.core.params import flatten
from wheelsim.core.vehicle_sim.config import VehicleSimSettings

UNITS = {'dead_time': 's', 'time_constant': 's', 'max_velocity': 'm/s', 'max_acceleration':
         'm/s^2', 'bias': 'm/s', 'wheel_radius': 'm', 'track': 'm', 'wheel_base': 'm',
         'lever': 'm'}
STEERING_UNITS = {'max_velocity': 'rad/s', 'max_position': 'rad', 'bias': 'rad'}


def _unit(key: str) -> str:
    leaf = key.rsplit('.', 1)[-1]
    if key.startswith('steering_actuator.') and leaf in STEERING_UNITS:
        return STEERING_UNITS[leaf]
    return UNITS.get(leaf, '')


def params_tree(calibration: Calibration, geometry: Mapping[str, Estimate],
                step_rate_hz: float, held: Mapping[str, Any] | None = None) -> dict:
    """The vehicle_sim parameters: the step rate the fit simulated at (to whose steps
    vehicle_sim rounds the fitted dead times, real numbers of seconds; the output rates whose
    defaults it is below, at it), what the fit held fixed (``held``: the params file's
    parameters below ``model_params.<model>``, as given), the fitted actuators, and the
    geometry joint_states gave (the omni's lever is not a parameter: ``held`` gives the
    wheel_base and track made from it); a fitted or measured value replaces a held one."""
    # + 0.0: a value rounded to zero from below is written 0.0, not -0.0
    values: dict = {**(held or {}), **{key: round(float(value), 6) + 0.0
                                       for key, value in calibration.values.items()}}
    for key, estimate in geometry.items():
        if key == 'wheel_radius':
            diameter = 'vis_wheel_diameter' if calibration.model == 'omni' else 'vis_tire_diameter'
            values[diameter] = round(2.0 * estimate.value, 6)
        elif key != 'lever':
            values[key] = round(estimate.value, 6)
    tree: dict = {}
    for key, value in sorted(values.items()):
        node = tree
        parts = key.split('.')
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    timing: dict = {'step_rate': float(step_rate_hz)}
    defaults = VehicleSimSettings()
    for name, default in (('pub_rate', defaults.pub_rate), ('clock_rate', defaults.clock_rate),
                          ('scan', defaults.scan.rate)):
        if default > step_rate_hz:  # vehicle_sim takes no rate above its step rate
            timing[name] = {'rate': float(step_rate_hz)} if name == 'scan' else float(
                step_rate_hz)
    return {'/**/vehicle_sim': {'ros__parameters': {
        **timing, 'model': calibration.model, 'model_params': {calibration.model: tree}}}}


def path_text(path: str | os.PathLike) -> str:
    """``path`` as one line of text a UTF-8 file can hold: bytes of its name that are not UTF-8
    (which Python reads as surrogates) as ``\\xNN``, line breaks and other characters that do
    not print (but the space) as Python writes them in a string (``\\n``, ``\\u2028``)."""
    text = os.fsencode(path).decode('utf-8', 'backslashreplace')
    return ''.join(c if c.isprintable() or c == ' ' else c.encode('unicode_escape').decode()
                   for c in text)


#: How a params file that ``wheelsim calibrate`` wrote begins: ``--overwrite`` replaces no other.
PARAMS_FILE_MARK = '# Written by wheelsim calibrate'


def write_params(calibration: Calibration, geometry: Mapping[str, Estimate], path: Path,
                 step_rate_hz: float, name: str | None = None,
                 held: Mapping[str, Any] | None = None) -> None:
    """The params file (:func:`params_tree`) at ``path``, its usage line naming ``name``
    (default: ``path``'s), quoted as a shell needs it."""
    header = (f'{PARAMS_FILE_MARK}: vehicle_sim parameters fitted to a recording.\n'
              '#   vehicle_sim --ros-args --params-file '
              + path_text(shlex.quote(name or path.name)) + '\n')
    path.write_text(header + yaml_numbers.dump(
        params_tree(calibration, geometry, step_rate_hz, held), sort_keys=False))


def flat_params(path: Path) -> dict:
    """The vehicle_sim parameters of a params file as dotted names (for checks)."""
    tree = yaml_numbers.load(path.read_text())
    return flatten(tree['/**/vehicle_sim']['ros__parameters'])


def format_report(calibration: Calibration, geometry: Mapping[str, Estimate],
                  recording: Recording, source: str, seconds: float,
                  held: Mapping[str, float] | None = None,
                  replaced: Mapping[str, tuple[float, float]] | None = None,
                  from_lever: Mapping[str, float] | None = None) -> str:
    """The report; ``held``: the geometry the fit held fixed from the params file (keys below
    ``model_params.<model>``, metres), named with its values; ``replaced``: the params file's
    geometry that joint_states measured otherwise, {key: (the file's value, the one used)};
    ``from_lever``: the omni's wheel_base and track made from its measured lever."""
    lines = [f'wheelsim calibrate: {source}',
             f'model {calibration.model}; {recording.duration_s:.1f} s, '
             f'{len(recording.command_t_s)} commands, {len(recording.measured_t_s)} measured '
             f'samples; fitted in {seconds:.1f} s of CPU', '',
             f'{"parameter (model_params." + calibration.model + ".)":48s} {"value":>10s}  '
             f'95 % interval']
    rows = [(key, key, estimate) for key, estimate in calibration.estimates.items()] + [
        (f'{key} (geometry, from joint_states)', key, estimate)
        for key, estimate in geometry.items()]
    for label, key, estimate in rows:
        lines.append(f'{label:48s} {estimate.value:10.5g}  [{estimate.low:.5g}, '
                     f'{estimate.high:.5g}] {_unit(key)}')
    if held:
        lines.append('geometry held fixed, from --params: ' + ', '.join(
            f'{key} {value:.5g} {_unit(key)}' for key, value in held.items()))
    if replaced:
        lines.append('geometry from joint_states, not from --params: ' + ', '.join(
            f'{key} {used:.5g} {_unit(key)} (the file: {given:.5g})'
            for key, (given, used) in replaced.items()))
    if from_lever:
        lines.append('wheel_base {wheel_base:.5g} m and track {track:.5g} m written: their mean '
                     'is the lever, which joint_states measure; they do not separate the two '
                     '(a params file giving both gives their proportion)'.format(**from_lever))
    lines += ['', 'residual RMS (simulated - measured): ' + ', '.join(
        f'{channel} {rms:.4g} {CHANNEL_UNITS[channel]}'
        for channel, rms in calibration.rms.items())]
    lines += ['', 'The intervals assume the model is right and scale the residual noise up for '
              'its correlation; vehicle_sim rounds a dead time to its step.' + (
                  ' The geometry from joint_states assumes rolling without slip.' if geometry
                  else '')]
    return '\n'.join(lines) + '\n'


def plot_response(calibration: Calibration, recording: Recording, path: Path) -> None:
    """One panel per channel: measured and simulated against time."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    t_s = recording.measured_t_s - recording.start_s
    channels = calibration.channels
    figure, axes = plt.subplots(len(channels), 1, figsize=(10, 2.4 * len(channels)),
                                sharex=True, squeeze=False)
    for i, (axis, channel) in enumerate(zip(axes[:, 0], channels, strict=True)):
        axis.plot(t_s, calibration.measured[:, i], label='measured', lw=1.5)
        axis.plot(t_s, calibration.simulated[:, i], label='simulated (fitted)', lw=1.0,
                  ls='--')
        axis.set_ylabel(f'{channel} [{CHANNEL_UNITS[channel]}]')
        axis.grid(alpha=0.3)
    axes[0, 0].legend(loc='upper right')
    axes[0, 0].set_title(f'wheelsim calibrate: {calibration.model}, measured vs simulated')
    axes[-1, 0].set_xlabel('time since the first sample [s]')
    figure.tight_layout()
    figure.savefig(path, dpi=110, format='png')  # whatever the name's suffix
    plt.close(figure)
