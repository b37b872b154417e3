"""Recipes: a named, versioned ensemble (segmenters with parameters), consensus method and post-processing.

Built-in recipes are listed by ``segensemble recipes``; a recipe file is TOML
(or YAML when PyYAML is installed) with the same keys::

    name = "mine"
    version = "1"
    segmenters = ["felzenszwalb:scale=300", "slic:n_segments=200"]
    method = "merge"
    n_segments = "auto"
    [params]
    threshold = 0.35
    [postprocess]
    connected = true
    min_size = 0

Any field can be overridden from the CLI (``-s``, ``-m``, ``-k``, ``-p``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from pathlib import Path

try:
    import tomllib as _toml
except ModuleNotFoundError:  # Python 3.10
    import tomli as _toml

from segensemble.edges import boundary_models
from segensemble.errors import InputError
from segensemble.pipeline import deferred
from segensemble.pipeline.exposure import check_exposure
from segensemble.pipeline.workscale import check_working_pixels
from segensemble.pipeline.specs import check_segmenter_params, parse_segmenter_spec
from segensemble.validation import check_int, check_n_segments

__all__ = ["Recipe", "BUILTIN", "VERSIONS", "MEMBER_PARAMS", "load_recipe", "recipe_from_mapping", "learned_boundaries"]

#: Largest recipe file read (bytes): a recipe is a few hundred bytes; this bounds what a parser is given.
MAX_RECIPE_BYTES = 1_000_000
#: Method parameters fitted to a recipe's particular members (dropped when the segmenters are replaced).
MEMBER_PARAMS = ("member_weights", "coefficients")

_FIELDS = ("name", "version", "description", "segmenters", "method", "n_segments", "params", "postprocess", "spatial",
           "image_aware", "boundary", "working_pixels", "exposure")



def learned_boundaries() -> list:
    """The names of the learned boundary evidence: ``'learned'`` (the shipped default detector) and
    ``'learned:NAME'`` for every shipped detector model (:func:`segensemble.edges.boundary_models`).

    Examples
    --------
    >>> learned_boundaries()[:2]
    ['learned', 'learned:boundary-v1']
    """
    return ["learned"] + [f"learned:{name}" for name in boundary_models()]


@dataclass(frozen=True)
class Recipe:
    """An ensemble, a consensus method and post-processing, by name and version.

    Examples
    --------
    >>> r = BUILTIN["classic"]
    >>> r.method, r.with_overrides(method="vote").method
    ('eac', 'vote')
    """

    name: str
    version: str
    segmenters: tuple
    method: str
    n_segments: object = "auto"
    params: dict = field(default_factory=dict)
    postprocess: dict = field(default_factory=lambda: {"connected": False, "min_size": 0})
    description: str = ""
    #: Settings of the image-aware frame every method runs in on an image
    #: (:data:`segensemble.pipeline.frame.SPATIAL_DEFAULTS` keys); for ``merge`` they are its parameters.
    spatial: dict = field(default_factory=dict)
    #: Run the method in the image-aware frame on an image (recipes published before it, such as
    #: ``default@3``, keep the method on the raw atoms so that their results never change).
    image_aware: bool = True
    #: Boundary evidence of ``merge`` and of the image-aware frame when the caller gives none: None (the
    #: colour gradient), ``'learned'`` (the shipped boundary detector's probability, :mod:`segensemble.edges`) or
    #: ``'learned:NAME'`` (the shipped detector model NAME, :func:`segensemble.edges.boundary_models`).
    boundary: str | None = None
    #: Working scale: an image of more pixels is processed area-averaged to this many and its results are
    #: brought back to full resolution (:mod:`segensemble.pipeline.workscale`); None processes every image at its size.
    working_pixels: int | None = None
    #: Exposure (:mod:`segensemble.pipeline.exposure`): a picture whose white point is below this value is
    #: brightened to it before the members see it; None takes every picture as it is.
    exposure: float | None = None

    def with_overrides(self, *, segmenters=None, method=None, n_segments=None, params=None) -> Recipe:
        """A copy with the given fields replaced.

        ``params`` are merged; a new method starts from none. New segmenters
        drop the parameters fitted to the old members (:data:`MEMBER_PARAMS`),
        so the method's defaults apply unless ``params`` gives them again.

        Examples
        --------
        >>> r = BUILTIN["default"].with_overrides(segmenters=["slic", "felzenszwalb"])
        >>> sorted(set(BUILTIN["default"].spatial) - set(r.spatial))
        ['coefficients', 'member_weights']
        """
        base = self.without_member_params() if segmenters is not None and tuple(segmenters) != self.segmenters \
            else self
        new_params = dict(base.params) if method is None or method == self.method else {}
        new_params.update(params or {})
        return replace(
            base,
            spatial=dict(base.spatial),
            segmenters=tuple(segmenters) if segmenters is not None else self.segmenters,
            method=method or self.method,
            n_segments=self.n_segments if n_segments is None else n_segments,
            params=new_params,
        )

    def member_params(self) -> tuple:
        """The names of the parameters fitted to the recipe's own members that it holds (:data:`MEMBER_PARAMS`).

        Examples
        --------
        >>> BUILTIN["default"].member_params(), BUILTIN["default"].without_member_params().member_params()
        (('member_weights', 'coefficients'), ())
        """
        return tuple(k for k in MEMBER_PARAMS if k in self.params or k in self.spatial)

    def without_member_params(self) -> Recipe:
        """A copy without the parameters fitted to the recipe's own members (for segmentations made elsewhere).

        Examples
        --------
        >>> sorted(BUILTIN["default"].without_member_params().spatial)
        ['colourless_threshold', 'engine', 'min_size', 'threshold']
        """
        return replace(self, params={k: v for k, v in self.params.items() if k not in MEMBER_PARAMS},
                       spatial={k: v for k, v in self.spatial.items() if k not in MEMBER_PARAMS})

    def method_params(self, *, image: bool = True) -> dict:
        """The consensus method's parameters: ``params``, and for ``merge`` on an image the spatial settings under them.

        On an image ``merge`` is the image-aware frame without a partition
        vote, so the recipe's spatial settings (learned coefficients, member
        weights, cut, minimum size) are its defaults; without one (``image=False``)
        it is the plain method with its own defaults.

        Examples
        --------
        >>> VERSIONS["default"]["8"].method_params()["threshold"], VERSIONS["default"]["8"].method_params(image=False)
        (0.45, {})
        """
        if self.method != "merge" or not image:
            return dict(self.params)
        return {**deferred.frame().merge_params(self.spatial), **self.params}

    def to_dict(self) -> dict:
        d = asdict(self)
        d["segmenters"] = list(self.segmenters)
        return d

    @cached_property
    def members(self) -> tuple:
        """The segmenters parsed and checked, once per recipe: ``((name, params), ...)``, what the runner runs.

        Examples
        --------
        >>> Recipe("mine", "1", ("slic:n_segments=4", "felzenszwalb"), "eac", 2).members
        (('slic', {'n_segments': 4}), ('felzenszwalb', {}))
        """
        resolved = []
        for spec in self.segmenters:
            try:
                name, params = parse_segmenter_spec(spec)
                check_segmenter_params(name, params)
            except InputError as exc:
                raise InputError(f"recipe {self.name!r}: segmenters: {spec!r}: {exc}") from exc
            resolved.append((name, params))
        return tuple(resolved)

    def validate(self) -> Recipe:
        """Check the segmenters, method, parameters and post-processing; return self."""
        where = f"recipe {self.name!r}"
        if not self.segmenters:
            raise InputError(f"{where}: segmenters: expected at least one segmenter")
        self.members  # noqa: B018  (parsed and checked here, kept for the runner)
        cls = deferred.consensus().get(self.method)
        if not isinstance(self.params, dict) or not all(isinstance(k, str) for k in self.params):
            raise InputError(f"{where}: params: expected a table of name = value, got {self.params!r}")
        unknown = set(self.params) - set(cls().get_params())
        if unknown:
            raise InputError(f"{where}: params: {self.method} has no parameter(s) {sorted(unknown)}")
        k = check_n_segments(self.n_segments)
        if not isinstance(self.image_aware, bool):
            raise InputError(f"{where}: image_aware: expected true or false, got {self.image_aware!r}")
        if self.boundary is not None and self.boundary not in learned_boundaries():
            raise InputError(f"{where}: boundary: expected none or one of {', '.join(learned_boundaries())}, "
                             f"got {self.boundary!r}")
        if not isinstance(self.spatial, dict):
            raise InputError(f"{where}: spatial: expected a table of settings, got {self.spatial!r}")

        check_working_pixels(self.working_pixels, f"{where}: working_pixels")
        check_exposure(self.exposure, f"{where}: exposure")
        try:
            cls(**{**self.method_params(), "n_clusters": k})._validate_params()
        except (TypeError, ValueError) as exc:
            raise InputError(f"{where}: params: {' '.join(str(exc).split())}") from exc
        if not isinstance(self.postprocess, dict):
            raise InputError(f"{where}: postprocess: expected a table with connected, min_size, "
                             f"got {self.postprocess!r}")
        extra = set(self.postprocess) - {"connected", "min_size"}
        if extra:
            raise InputError(f"{where}: postprocess: unknown key(s) {sorted(extra)}; expected connected, min_size")
        if not isinstance(self.postprocess.get("connected", False), bool):
            raise InputError(f"{where}: postprocess: connected: expected true or false, "
                             f"got {self.postprocess['connected']!r}")
        check_int(self.postprocess.get("min_size", 0), f"{where}: postprocess: min_size", minimum=0)
        try:
            deferred.frame().check_spatial(self.spatial)
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from exc
        return self


#: The built-in recipes: one TOML file each in ``builtin/`` beside this module (data, not code; the same
#: format as a user's recipe file), read once at import.
BUILTIN_FOLDER = Path(__file__).with_name("builtin")


def _recipe(data: dict) -> Recipe:
    """A Recipe from a parsed recipe mapping, the defaults filled in (no validation)."""
    return Recipe(
        name=str(data["name"]),
        version=str(data.get("version", "1")),
        segmenters=tuple(data["segmenters"]),
        method=str(data["method"]),
        n_segments=data.get("n_segments", "auto"),
        params=dict(data.get("params", {})),
        postprocess={"connected": False, "min_size": 0, **dict(data.get("postprocess", {}))},
        description=str(data.get("description", "")),
        spatial=dict(data.get("spatial", {})),
        image_aware=data.get("image_aware", True),
        boundary=data.get("boundary"),
        working_pixels=data.get("working_pixels"),
        exposure=data.get("exposure"),
    )


def _builtin_recipes() -> list:
    return [_recipe(_toml.loads(path.read_text(encoding="utf-8"))) for path in sorted(BUILTIN_FOLDER.glob("*.toml"))]


#: Every built-in recipe by name and version; a version, once published, never changes (pin it as
#: ``name@version`` to keep results reproducible across upgrades).
VERSIONS: dict = {}
for _r in _builtin_recipes():
    VERSIONS.setdefault(_r.name, {})[_r.version] = _r
#: The newest version of every built-in recipe (what a bare name selects).
BUILTIN = {name: versions[max(versions, key=int)] for name, versions in VERSIONS.items()}


def recipe_from_mapping(data: dict, *, source: str = "recipe") -> Recipe:
    """A validated Recipe from a mapping (a parsed TOML/YAML file).

    Examples
    --------
    >>> recipe_from_mapping({"name": "x", "segmenters": ["slic"], "method": "vote"}).version
    '1'
    """
    if not isinstance(data, dict):
        raise InputError(f"{source}: expected a table of recipe fields, got {type(data).__name__}")
    unknown = set(data) - set(_FIELDS)
    if unknown:
        raise InputError(f"{source}: unknown field(s) {sorted(unknown)}; expected {', '.join(_FIELDS)}")
    for key in ("name", "segmenters", "method"):
        if key not in data:
            raise InputError(f"{source}: missing field {key!r}")
    segs = data["segmenters"]
    if isinstance(segs, str) or not all(isinstance(x, str) for x in segs):
        raise InputError(f"{source}: segmenters: expected a list of segmenter specs, got {segs!r}")
    for key, kind in (("params", dict), ("postprocess", dict), ("spatial", dict)):
        if key in data and not isinstance(data[key], kind):
            raise InputError(f"{source}: {key}: expected a table of name = value, got {data[key]!r}")
    recipe = _recipe(data)
    return recipe.validate()


def load_recipe(name_or_path) -> Recipe:
    """A built-in recipe by name (the newest version) or ``name@version``, or a recipe file (.toml, .yaml/.yml, .json).

    Examples
    --------
    >>> load_recipe("default").method
    'merge'
    >>> load_recipe("default@3").version
    '3'
    """
    key = str(name_or_path)
    if key in BUILTIN:
        return BUILTIN[key]
    name, at, version = key.partition("@")
    if at and name in VERSIONS:
        if version not in VERSIONS[name]:
            raise InputError(f"recipe: {name!r} has no version {version!r}; versions: "
                             f"{', '.join(sorted(VERSIONS[name], key=int))}")
        return VERSIONS[name][version]
    path = Path(key)
    if not path.is_file():
        raise InputError(f"recipe: {key!r} is neither a built-in recipe ({', '.join(BUILTIN)}, or NAME@VERSION) "
                         "nor a file")
    suffix = path.suffix.lower()
    if path.stat().st_size > MAX_RECIPE_BYTES:
        raise InputError(f"{path}: a recipe file of {path.stat().st_size:,} bytes; at most {MAX_RECIPE_BYTES:,}")
    try:
        if suffix == ".toml":
            data = _toml.loads(path.read_text(encoding="utf-8"))
        elif suffix in (".yaml", ".yml"):
            try:
                import yaml
            except ModuleNotFoundError as exc:
                raise InputError(f"{path}: YAML recipes need PyYAML (pip install pyyaml); or use TOML") from exc
            text = path.read_text(encoding="utf-8")
            if any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(text, Loader=yaml.SafeLoader)):
                raise InputError(f"{path}: YAML aliases (*name) are not accepted in a recipe; write the values out")
            data = yaml.safe_load(text)
        elif suffix == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
        else:
            raise InputError(f"{path}: expected a .toml, .yaml or .json recipe file")
    except InputError:
        raise
    except Exception as exc:  # parse errors of any of the formats
        raise InputError(f"{path}: not a readable recipe ({type(exc).__name__}: {exc})") from exc
    return recipe_from_mapping(data, source=str(path))
