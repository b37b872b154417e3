"""A name -> object registry; one instance per family (segmenters, consensus)."""

from __future__ import annotations

import importlib
import inspect
import threading

from segensemble.errors import InputError

__all__ = ["Registry"]

#: Held while :meth:`Registry.preload` imports (one thread at a time).
_PRELOAD_LOCK = threading.Lock()


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
        self._imports: dict = {}

    def register(self, name: str, *, cost: float = 1.0, imports: tuple = ()):
        """Decorator registering an object under ``name`` (names are unique).

        ``cost`` is its rough run time relative to the family's typical one:
        parallel runs start the costliest first. ``imports`` names what the
        object imports when it first runs, each ``"module"`` or
        ``"module:attribute"`` (an attribute that a lazily loading package
        such as ``skimage.segmentation`` loads on first access): :meth:`preload`
        imports them before the objects run in threads.
        """

        def deco(obj):
            if name in self._items:
                raise RuntimeError(f"{self.kind} {name!r} is registered twice")
            self._items[name] = obj
            self._costs[name] = float(cost)
            self._imports[name] = tuple(imports)
            return obj

        return deco

    def preload(self, names) -> None:
        """Import, in the calling thread, what the objects ``names`` import when they first run.

        Objects run in threads must not import at once: Python lets two
        threads import modules that import each other (``scipy.spatial`` and
        ``scipy.spatial.distance``, reached from scikit-image's SLIC in one
        thread and its morphology in another) only by handing one of them a
        half-initialised module, which fails with ``ImportError: cannot import
        name ... from partially initialized module``. After this call the
        objects import nothing new. Calls from several threads import in turn.

        Examples
        --------
        >>> reg = Registry("widget")
        >>> @reg.register("a", imports=("json", "os.path:join"))
        ... def a():
        ...     "Make an a."
        >>> reg.preload(["a"])
        """
        with _PRELOAD_LOCK:
            for name in names:
                for target in self._imports.get(name, ()):
                    module, _, attribute = target.partition(":")
                    loaded = importlib.import_module(module)
                    if attribute:
                        getattr(loaded, attribute)

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
