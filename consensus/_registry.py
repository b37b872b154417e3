"""The consensus registry."""

from segensemble.registry import Registry

REGISTRY = Registry("consensus method")
