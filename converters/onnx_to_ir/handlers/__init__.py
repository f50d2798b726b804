"""The handlers, one module per family; importing them fills the registry."""

from . import control, domain, elementwise, reduce, tensor  # noqa: F401
