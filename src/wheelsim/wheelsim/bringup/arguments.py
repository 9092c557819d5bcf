"""Launch arguments read as numbers, with an error naming the argument."""


def number(argument: str, text: str, kind: type = float) -> float | int:
    """``text`` (the value of launch argument ``argument``) as a ``kind`` (float or int);
    RuntimeError naming the argument if it is not one (the launch fails, nothing started)."""
    try:
        return kind(text)
    except ValueError:
        what = 'an integer' if kind is int else 'a number'
        raise RuntimeError(f'{argument}:={text} is invalid: must be {what}') from None
