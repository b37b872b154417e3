"""The segmenter registry."""

from segensemble.registry import Registry

REGISTRY = Registry("segmenter")
