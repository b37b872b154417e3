"""scikit-learn's estimator protocol, without importing scikit-learn: parameters, cloning, ``fit_predict``.

The consensus estimators follow scikit-learn's conventions (``__init__``
stores its keyword arguments as attributes; ``get_params``/``set_params``;
``fit`` returns self and sets ``labels_``; ``fit_predict``) so that
:func:`sklearn.base.clone`, pipelines and grid searches use them as their
own. scikit-learn does not require its ``BaseEstimator`` for that
("Developing scikit-learn estimators": an estimator is an object with
``get_params``, ``set_params`` and ``fit``), and importing scikit-learn
costs about a second of start-up (it imports SciPy's statistics), which
``segensemble fuse`` would pay on every call for a base class. These two
classes give the protocol in plain Python: scikit-learn is imported only by
code that uses it, and :meth:`Estimator.__sklearn_tags__` answers
scikit-learn's own questions (it is called by scikit-learn only).

References
----------
scikit-learn developers' guide, "Developing scikit-learn estimators":
https://scikit-learn.org/stable/developers/develop.html
"""

from __future__ import annotations

import copy
import inspect

__all__ = ["Estimator", "ClusterMixin", "clone"]


class Estimator:
    """Parameters of an estimator read from its ``__init__`` signature, as scikit-learn's ``BaseEstimator`` does.

    Examples
    --------
    >>> class Scaled(Estimator):
    ...     def __init__(self, factor=1.0, *, name="x"):
    ...         self.factor = factor
    ...         self.name = name
    >>> est = Scaled(2.0)
    >>> est
    Scaled(factor=2.0)
    >>> est.get_params()
    {'factor': 2.0, 'name': 'x'}
    >>> est.set_params(name="y").name
    'y'
    >>> est.set_params(speed=3)
    Traceback (most recent call last):
    ...
    ValueError: Invalid parameter 'speed' for estimator Scaled(...). Valid parameters are: ['factor', 'name'].
    """

    @classmethod
    def _get_param_names(cls) -> list[str]:
        init = cls.__init__
        if init is object.__init__:
            return []
        params = inspect.signature(init).parameters.values()
        if any(p.kind == p.VAR_POSITIONAL for p in params):
            raise RuntimeError(f"{cls.__name__}: estimators take their parameters by name, not *args")
        return sorted(p.name for p in params if p.name != "self" and p.kind != p.VAR_KEYWORD)

    def get_params(self, deep: bool = True) -> dict:
        """Parameter names mapped to their values (with ``deep``, also ``name__sub`` of estimator values)."""
        out = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{name}__{k}", v) for k, v in value.get_params().items())
            out[name] = value
        return out

    def set_params(self, **params):
        """Set parameters (``name__sub`` for those of an estimator value); returns self."""
        if not params:
            return self
        valid = self.get_params(deep=True)
        nested: dict = {}
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in valid:
                raise ValueError(f"Invalid parameter {name!r} for estimator {self}. Valid parameters are: "
                                 f"{self._get_param_names()!r}.")
            if sub:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
                valid[name] = value
        for name, sub_params in nested.items():
            valid[name].set_params(**sub_params)
        return self

    def __sklearn_clone__(self):
        return clone(self)

    def __sklearn_tags__(self):  # asked by scikit-learn only, so scikit-learn is imported already
        from sklearn.utils import Tags, TargetTags

        return Tags(estimator_type=getattr(self, "_estimator_type", None), target_tags=TargetTags(required=False))

    def __repr__(self) -> str:
        defaults = {name: p.default for name, p in inspect.signature(type(self).__init__).parameters.items()}
        empty = inspect.Parameter.empty
        shown = [f"{name}={value!r}" for name, value in self.get_params(deep=False).items()
                 if defaults.get(name, empty) is empty or repr(value) != repr(defaults[name])]
        return f"{type(self).__name__}({', '.join(shown)})"


class ClusterMixin:
    """``fit_predict`` of a clusterer: ``fit`` then ``labels_``.

    Examples
    --------
    >>> class First(ClusterMixin, Estimator):
    ...     def fit(self, X, y=None):
    ...         self.labels_ = [0] * len(X)
    ...         return self
    >>> First().fit_predict([[1], [2]])
    [0, 0]
    """

    _estimator_type = "clusterer"

    def fit_predict(self, X, y=None, **kwargs):
        """Fit on ``X`` and return ``labels_``."""
        self.fit(X, **kwargs)
        return self.labels_


def clone(estimator):
    """A new unfitted estimator with the same parameters (each parameter value cloned or deep-copied).

    Examples
    --------
    >>> class Holder(Estimator):
    ...     def __init__(self, items=None):
    ...         self.items = items
    >>> a = Holder(items=[1, 2]); b = clone(a)
    >>> b.items == a.items and b.items is not a.items
    True
    """
    params = {name: clone(value) if isinstance(value, Estimator) else copy.deepcopy(value)
              for name, value in estimator.get_params(deep=False).items()}
    return type(estimator)(**params)
