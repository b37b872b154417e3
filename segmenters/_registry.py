"""The segmenter registry."""

from segensemble._registry import Registry

REGISTRY = Registry("segmenter")
