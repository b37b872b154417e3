"""Exception types raised by segensemble.

Every error caused by the caller's input (a bad parameter, an unreadable file,
segmentations of different shapes, ...) is an :class:`InputError`. It subclasses
:class:`ValueError`, so code written against scikit-learn conventions keeps
working, and the command-line interface maps it to exit code 2.
"""

from __future__ import annotations

import functools

__all__ = ["InputError", "FileFormatError", "first_line", "describe_exception", "describe", "warn_deprecated",
           "renamed_keywords"]


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


def renamed_keywords(**renames):
    """Decorator: keyword arguments renamed, the old names still accepted for one release with a DeprecationWarning.

    ``renamed_keywords(random_state="rng")`` lets callers keep writing ``f(random_state=0)`` (warned, passed on as
    ``rng=0``); giving both names is an :class:`InputError`.

    Examples
    --------
    >>> import warnings
    >>> @renamed_keywords(random_state="rng")
    ... def f(*, rng=None):
    ...     return rng
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     f(random_state=3), str(caught[0].message)
    (3, 'f(random_state=...) is deprecated; use rng')
    """
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise InputError(f"{old}: give {new} only ({old} is its deprecated name)")
                    warn_deprecated(f"{fn.__name__}({old}=...)", new)
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        return wrapper

    return decorate


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
