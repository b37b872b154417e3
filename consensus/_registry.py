"""The consensus registry."""

from segensemble._registry import Registry

REGISTRY = Registry("consensus method")
