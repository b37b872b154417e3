"""Parameter constraints of the estimators, checked in one place with one-line errors.

The estimators declare ``_parameter_constraints`` in scikit-learn's style
(a list of accepted forms per parameter); this module owns the few forms they
use, so that validation does not depend on scikit-learn's private
``sklearn.utils._param_validation`` (which may change without deprecation).

Accepted forms: :class:`Interval`, :class:`StrOptions`, ``None`` (the value
None), a type (``dict``: an instance of it), and the names ``"boolean"``,
``"random_state"`` (None, an int or a ``numpy.random.RandomState``) and
``"array-like"`` (a list, tuple or array).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from segensemble.errors import InputError

__all__ = ["Interval", "StrOptions", "ValidatedParams", "validate_params"]


@dataclass(frozen=True)
class Interval:
    """Numbers of a kind (``numbers.Integral`` or ``numbers.Real``) within bounds (None: unbounded).

    ``closed``: 'left', 'right', 'both' or 'neither' — which bounds belong to the interval.

    Examples
    --------
    >>> Interval(numbers.Integral, 1, None, closed="left").accepts(3)
    True
    >>> Interval(numbers.Real, 0, 1, closed="neither").accepts(1.0)
    False
    """

    kind: type
    left: float | None
    right: float | None
    closed: str = "both"

    def accepts(self, value) -> bool:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, self.kind):
            return False
        if isinstance(value, float) and np.isnan(value):
            return False
        lo_ok = self.left is None or (value >= self.left if self.closed in ("left", "both") else value > self.left)
        hi_ok = self.right is None or (value <= self.right if self.closed in ("right", "both") else value < self.right)
        return bool(lo_ok and hi_ok)

    def __str__(self) -> str:
        kind = "an int" if self.kind is numbers.Integral else "a number"
        lo = "(-inf" if self.left is None else ("[" if self.closed in ("left", "both") else "(") + f"{self.left:g}"
        hi = "inf)" if self.right is None else f"{self.right:g}" + ("]" if self.closed in ("right", "both") else ")")
        return f"{kind} in {lo}, {hi}"


@dataclass(frozen=True)
class StrOptions:
    """One of a set of strings.

    Examples
    --------
    >>> str(StrOptions({"b", "a"})), StrOptions({"a"}).accepts("a")
    ("one of 'a', 'b'", True)
    """

    options: frozenset

    def __init__(self, options):
        object.__setattr__(self, "options", frozenset(options))

    def accepts(self, value) -> bool:
        return isinstance(value, str) and value in self.options

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(o) for o in sorted(self.options))


def _accepts(form, value) -> bool:
    if form is None:
        return value is None
    if isinstance(form, (Interval, StrOptions)):
        return form.accepts(value)
    if form == "boolean":
        return isinstance(value, (bool, np.bool_))
    if form == "random_state":
        return value is None or isinstance(value, np.random.RandomState) or (
            isinstance(value, numbers.Integral) and not isinstance(value, bool))
    if form == "array-like":
        return isinstance(value, (list, tuple, np.ndarray))
    if isinstance(form, type):
        return isinstance(value, form)
    raise TypeError(f"unknown parameter constraint {form!r}")  # a programming error in a declaration


def _describe(form) -> str:
    if form is None:
        return "None"
    if isinstance(form, type):
        return f"a {form.__name__}"
    return {"boolean": "true or false", "random_state": "None, an int or a RandomState",
            "array-like": "a list or an array"}.get(form, str(form))


def validate_params(constraints: dict, params: dict, owner: str) -> None:
    """Check every constrained parameter; the first violation raises one line naming it.

    Raises
    ------
    InputError
        ``name: expected <forms> (parameter of <owner>), got <value>``.

    Examples
    --------
    >>> validate_params({"k": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})]},
    ...                 {"k": 0}, "EAC")
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: k: expected an int in [1, inf) or one of 'auto' (parameter of EAC), got 0
    """
    for name, forms in constraints.items():
        if name not in params:
            continue
        value = params[name]
        if not any(_accepts(form, value) for form in forms):
            shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
            raise InputError(f"{name}: expected {' or '.join(_describe(f) for f in forms)} (parameter of {owner}), "
                             f"got {shown}")


class ValidatedParams:
    """Mixin for scikit-learn style estimators: ``_validate_params`` checks ``_parameter_constraints`` here.

    Put it before the estimator base (:class:`segensemble.estimator.Estimator`, or scikit-learn's
    ``BaseEstimator``) in the bases; ``fit`` calls ``self._validate_params()``.

    Examples
    --------
    >>> from segensemble.estimator import Estimator
    >>> class Est(ValidatedParams, Estimator):
    ...     _parameter_constraints = {"alpha": [Interval(numbers.Real, 0, None, closed="neither")]}
    ...     def __init__(self, alpha=1.0):
    ...         self.alpha = alpha
    >>> Est(alpha=-1)._validate_params()
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: alpha: expected a number in (0, inf) (parameter of Est), got -1
    """

    _parameter_constraints: dict = {}

    def _validate_params(self) -> None:
        validate_params(self._parameter_constraints, self.get_params(deep=False), type(self).__name__)
