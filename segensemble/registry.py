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
    >>> reg.available(), reg.describe(), reg.cost("a")
    (['a'], {'a': 'Make an a.'}, 1.0)
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict = {}
        self._costs: dict = {}

    def register(self, name: str, *, cost: float = 1.0):
        """Decorator registering an object under ``name`` (names are unique).

        ``cost`` is its rough run time relative to the family's typical one:
        parallel runs start the costliest first.
        """

        def deco(obj):
            if name in self._items:
                raise RuntimeError(f"{self.kind} {name!r} is registered twice")
            self._items[name] = obj
            self._costs[name] = float(cost)
            return obj

        return deco

    def cost(self, name: str) -> float:
        """The relative run time ``name`` was registered with (1 when unknown)."""
        return self._costs.get(name, 1.0)

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
