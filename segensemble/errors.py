"""Exception types raised by segensemble.

Every error caused by the caller's input (a bad parameter, an unreadable file,
segmentations of different shapes, ...) is an :class:`InputError`. It subclasses
:class:`ValueError`, so code written against scikit-learn conventions keeps
working, and the command-line interface maps it to exit code 2.
"""

from __future__ import annotations

__all__ = ["InputError", "FileFormatError"]


class InputError(ValueError):
    """Bad input: a parameter, an array or a file that cannot be used.

    The message is one line that names the parameter (or file), the value
    received and what was expected.
    """


class FileFormatError(InputError):
    """A file is missing, unreadable, corrupt or of an unsupported format.

    The message names the file.
    """
