"""Nav2's MPPI controller builds known to be wrong, found by the checksum of their library.

- :func:`mppi_problem`: why the installed Nav2's MPPI controller cannot be used (a known
  miscompiled build, :data:`KNOWN_MISCOMPILED_MPPI`), in one line; None when it can.
- :func:`mppi_warning`: the line nav2_bringup.launch.py logs when the Nav2 parameters it starts
  Nav2 with use MPPI for a controller and the installed MPPI is such a build.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: The controller plugin of Nav2's MPPI.
MPPI_PLUGIN = 'nav2_mppi_controller::MPPIController'
#: sha256 of libmppi_controller.so builds whose trajectory integration is wrong, and why.
KNOWN_MISCOMPILED_MPPI = {
    'b60cc75c1b0d32ebaecf50bd8e020a99dffe9fc62b3b3e4bea6e761003e5f843': (
        'the MPPI controller of the packed Nav2 1.3.13 prefix (../shared/nav2, archive sha256 '
        '9272856...) is miscompiled: -ffast-math with Debian\'s xsimd 8.1.0 flips the sign of '
        'xsimd cos/sin below |yaw| 135 deg, so every candidate trajectory is mirrored and MPPI '
        'drives away from its goal; outside this repository: rebuild the prefix with '
        'tools/nav2_mppi_signed_zeros.patch, or name a correct one in WHEELSIM_NAV2_PREFIX; '
        "meanwhile Nav2's graceful controller can run instead (docs/bringup.md)"),
}


def mppi_problem() -> str | None:
    """Why the installed Nav2's MPPI controller cannot be used, in one line (not installed,
    or a known miscompiled build); None when it can."""
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    try:
        prefix = Path(get_package_prefix('nav2_mppi_controller'))
    except PackageNotFoundError:
        return 'no nav2_mppi_controller in this Nav2'
    library = prefix / 'lib' / 'libmppi_controller.so'
    if not library.is_file():
        return f'nav2_mppi_controller has no {library}'
    return KNOWN_MISCOMPILED_MPPI.get(hashlib.sha256(library.read_bytes()).hexdigest())


def mppi_warning(parameters: Mapping[str, Any]) -> str | None:
    """The warning for Nav2 started with ``parameters`` (a params file's tree: node ->
    ``ros__parameters``): None unless a controller of ``controller_server`` is MPPI and
    :func:`mppi_problem` names one."""
    server = parameters.get('controller_server')
    values = server.get('ros__parameters') if isinstance(server, Mapping) else None
    if not isinstance(values, Mapping):
        return None
    names = values.get('controller_plugins') or ()
    uses_mppi = any(isinstance(values.get(name), Mapping)
                    and values[name].get('plugin') == MPPI_PLUGIN for name in names)
    problem = mppi_problem() if uses_mppi else None
    return None if problem is None else f'wheelsim: warning: {problem}'
