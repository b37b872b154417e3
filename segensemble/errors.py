"""Exception types raised by segensemble.

Every error caused by the caller's input (a bad parameter, an unreadable file,
segmentations of different shapes, ...) is an :class:`InputError`. It subclasses
:class:`ValueError`, so code written against scikit-learn conventions keeps
working, and the command-line interface maps it to exit code 2.
"""

from __future__ import annotations

__all__ = ["InputError", "FileFormatError", "first_line", "describe_exception", "describe", "warn_deprecated"]


class InputError(ValueError):
    """Bad input: a parameter, an array or a file that cannot be used.

    The message is one line that names the parameter (or file), the value
    received and what was expected.
    """


class FileFormatError(InputError):
    """A file is missing, unreadable, corrupt or of an unsupported format.

    The message names the file.
    """


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message ('' when it has none).

    Examples
    --------
    >>> first_line(ValueError("bad value\\nmore detail")), first_line(EOFError())
    ('bad value', '')
    """
    text = str(exc)
    return text.splitlines()[0] if text else ""


def describe_exception(exc: BaseException) -> str:
    """``'Type: first line of the message'``, or just the type when the message is empty.

    Examples
    --------
    >>> describe_exception(OSError("disk full\\ntry again")), describe_exception(EOFError())
    ('OSError: disk full', 'EOFError')
    """
    line = first_line(exc)
    return f"{type(exc).__name__}: {line}" if line else type(exc).__name__


def warn_deprecated(old: str, new: str, *, stacklevel: int = 2) -> None:
    """Warn (DeprecationWarning) that ``old`` is deprecated for ``new``, pointing at the caller of the function
    that calls this one (``stacklevel`` counted from that function, as for ``warnings.warn``).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_deprecated("f(jobs=...)", "n_jobs")
    >>> str(caught[0].message)
    'f(jobs=...) is deprecated; use n_jobs'
    """
    import warnings

    warnings.warn(f"{old} is deprecated; use {new}", DeprecationWarning, stacklevel=stacklevel + 1)


def describe(exc: BaseException) -> str:
    """Deprecated name of :func:`describe_exception`.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     describe(OSError("disk full"))
    'OSError: disk full'
    """
    warn_deprecated("segensemble.errors.describe", "describe_exception")
    return describe_exception(exc)
