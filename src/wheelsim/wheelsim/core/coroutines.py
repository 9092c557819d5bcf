"""Whether a callable is a coroutine function: what a caller that never awaits must refuse."""

from __future__ import annotations

import inspect
from typing import Any


def is_async(function: Any) -> bool:
    """Whether calling ``function`` gives a coroutine: an ``async def`` function or method, a
    ``functools.partial`` of one, or an object whose ``__call__`` is one."""
    return inspect.iscoroutinefunction(function) or (
        callable(function) and inspect.iscoroutinefunction(type(function).__call__))
