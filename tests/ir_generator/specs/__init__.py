"""The specs of every translated IR type (importing this package registers them)."""

from . import domain, elementwise, loops, misc, nn, shape  # noqa: F401
