"""Frame-name parameters shared by every node: one declaration and one validation rule.

The REP-105 frames ``map``, ``odom`` and ``base_link`` are the parameters ``map_frame``,
``odom_frame`` and ``base_frame``; ``frame_prefix`` is put before each of them for several
robots (``robot1/`` gives ``robot1/map``, ...). A configuration class declares the ones its node
uses with the functions below, inherits :class:`FrameNames` and calls
:meth:`FrameNames.check_frames` from its ``__post_init__``: the same rule everywhere.
"""

from __future__ import annotations

from typing import Any

from wheelsim.core.params import ParameterError, param

FRAME_PARAMETERS = ('map_frame', 'odom_frame', 'base_frame')


def map_frame() -> Any:
    """Declare ``map_frame``."""
    return param('map', 'Fixed world frame (REP-105) of poses, goals and plans.', read_only=True)


def odom_frame() -> Any:
    """Declare ``odom_frame``."""
    return param('odom', 'Odometry frame (REP-105): continuous, drifting against map.',
                 read_only=True)


def base_frame() -> Any:
    """Declare ``base_frame``."""
    return param('base_link', 'Vehicle body frame (REP-105).', read_only=True)


def frame_prefix() -> Any:
    """Declare ``frame_prefix``."""
    return param('', 'Prefix of every frame name (several robots), e.g. "robot1/"; vehicle_sim '
                 'puts it before its joint names too.', read_only=True)


def check_frame_text(name: str, value: str) -> None:
    """Raise :class:`ParameterError` if ``value`` (parameter ``name``) starts with '/' (tf2
    refuses such frame ids: geometry2 BufferCore::validateFrameId) or holds whitespace or
    control characters."""
    if value.startswith('/'):
        raise ParameterError(name, value, "must not start with '/' (tf2 refuses such frame ids)")
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value):
        raise ParameterError(name, value, 'must not contain whitespace or control characters')


class FrameNames:
    """Checks and prefixed names for a configuration dataclass holding frame parameters.

    Subclasses have ``frame_prefix`` and any of :data:`FRAME_PARAMETERS`.
    """

    frame_prefix: str

    def check_frames(self) -> None:
        """Raise :class:`ParameterError` unless every frame name is non-empty, distinct and
        well-formed, and the prefix well-formed (:func:`check_frame_text`)."""
        check_frame_text('frame_prefix', self.frame_prefix)
        seen: dict[str, str] = {}
        for name in FRAME_PARAMETERS:
            value = getattr(self, name, None)
            if value is None:
                continue
            if not value:
                raise ParameterError(name, value, 'must not be empty')
            check_frame_text(name, value)
            if value in seen:
                raise ParameterError(name, value, f'must differ from {seen[value]}')
            seen[value] = name

    @property
    def full_map_frame(self) -> str:
        """The map frame name with the frame prefix."""
        return self.frame_prefix + self.map_frame

    @property
    def full_odom_frame(self) -> str:
        """The odom frame name with the frame prefix."""
        return self.frame_prefix + self.odom_frame

    @property
    def full_base_frame(self) -> str:
        """The body frame name with the frame prefix."""
        return self.frame_prefix + self.base_frame
