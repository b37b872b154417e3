"""Segmenter specifications: ``'name'`` or ``'name:key=value,...'``, as the CLI and recipes write them."""

from __future__ import annotations

import inspect
import math
from numbers import Real

from segensemble.errors import InputError
from segensemble.pipeline import deferred

__all__ = ["parse_segmenter_spec", "parse_segmenter_list", "parse_value", "check_segmenter_params"]


def check_segmenter_params(method: str, params: dict):
    """The registered segmenter ``method``, after checking that it takes every parameter named in ``params``.

    Examples
    --------
    >>> check_segmenter_params("slic", {"foo": 1})
    Traceback (most recent call last):
    ...
    segensemble.errors.InputError: params: slic has no parameter 'foo'; expected one of ...
    """
    fn = deferred.segmenters().get(method)
    signature = inspect.signature(fn).parameters
    valid = [p for p, v in signature.items() if v.kind == v.KEYWORD_ONLY and p != "rng"]
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise InputError(f"params: {method} has no parameter {unknown[0]!r}; expected one of {', '.join(valid)}")
    for key, value in params.items():  # what can be told before running: numbers where numbers go, finite
        default = signature[key].default
        numeric = isinstance(default, Real) and not isinstance(default, bool)
        if numeric and (isinstance(value, bool) or not isinstance(value, Real)):
            raise InputError(f"params: {method}: {key} expected a number, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"params: {method}: {key} expected a finite number, got {value!r}")
    return fn


def parse_segmenter_spec(spec: str) -> tuple[str, dict]:
    """Parse ``'name'`` or ``'name:key=value,key=value'`` into (name, params).

    Values are read as int, then float, then kept as strings.

    Examples
    --------
    >>> parse_segmenter_spec("felzenszwalb:scale=500,min_size=40")
    ('felzenszwalb', {'scale': 500, 'min_size': 40})
    """
    name, _, rest = spec.strip().partition(":")
    params: dict = {}
    if rest:
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise InputError(f"segmenters: expected 'name:key=value,...', got {spec!r}")
            params[key.strip()] = parse_value(value.strip())
    return name.strip(), params


def parse_segmenter_list(text: str) -> list[str]:
    """Split a comma-separated list of segmenter specs.

    A comma-separated item holding ``=`` but no ``:`` continues the parameters
    of the previous segmenter, so parameters may be separated by commas too.

    Examples
    --------
    >>> parse_segmenter_list("slic,felzenszwalb:scale=500,min_size=40,slic:n_segments=50")
    ['slic', 'felzenszwalb:scale=500,min_size=40', 'slic:n_segments=50']
    """
    specs: list[str] = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        if "=" in item and ":" not in item:
            if not specs:
                raise InputError(f"segmenters: parameter {item!r} comes before any segmenter name")
            sep = "," if ":" in specs[-1] else ":"
            specs[-1] = f"{specs[-1]}{sep}{item}"
        else:
            specs.append(item)
    if not specs:
        raise InputError(f"segmenters: expected at least one segmenter name, got {text!r}")
    return specs


def parse_value(text: str):
    """A command-line value: int, then float, then true/false, else the string.

    Examples
    --------
    >>> parse_value("3"), parse_value("0.5"), parse_value("true"), parse_value("lab")
    (3, 0.5, True, 'lab')
    """
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text
