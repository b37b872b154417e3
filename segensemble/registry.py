"""A name -> object registry; one instance per family (segmenters, consensus)."""

from __future__ import annotations

import inspect

from segensemble.errors import InputError

__all__ = ["Registry"]


class Registry:
    """Maps names to callables or classes of one family.

    Parameters
    ----------
    kind : str
        What the family is called in error messages (``"segmenter"``, ...).

    Examples
    --------
    >>> reg = Registry("widget")
    >>> @reg.register("a")
    ... def a():
    ...     "Make an a."
    >>> reg.available(), reg.describe()
    (['a'], {'a': 'Make an a.'})
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict = {}

    def register(self, name: str):
        """Decorator registering an object under ``name`` (names are unique)."""

        def deco(obj):
            if name in self._items:
                raise RuntimeError(f"{self.kind} {name!r} is registered twice")
            self._items[name] = obj
            return obj

        return deco

    def get(self, name: str):
        """The object registered as ``name``.

        Raises
        ------
        InputError
            Unknown name; the message lists the valid ones.
        """
        try:
            return self._items[name]
        except (KeyError, TypeError):
            raise InputError(
                f"{self.kind}: unknown name {name!r}; expected one of {', '.join(self.available())}"
            ) from None

    def available(self) -> list[str]:
        """Sorted registered names."""
        return sorted(self._items)

    def describe(self) -> dict[str, str]:
        """First docstring line of every registered object, by name."""
        out = {}
        for name in self.available():
            doc = inspect.getdoc(self._items[name]) or ""
            out[name] = doc.strip().splitlines()[0] if doc.strip() else ""
        return out

    def __contains__(self, name) -> bool:
        return name in self._items
