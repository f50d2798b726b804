"""Errors raised when a node of the domain is built or checked."""


class OnnxExtError(ValueError):
    """Base class of the package's errors: always names what is wrong and where."""


class OpAttributeError(OnnxExtError):
    """An attribute of one of the domain's ops has a value OpenVINO would reject."""

    def __init__(self, op: str, attribute: str, problem: str, node: str | None = None):
        where = f" (node {node!r})" if node else ""
        super().__init__(f"{op}{where}: attribute {attribute!r} {problem}")
        self.op, self.attribute, self.problem, self.node = op, attribute, problem, node

    def at(self, node: str | None) -> "OpAttributeError":
        return self if node is None or self.node else OpAttributeError(self.op, self.attribute, self.problem, node)


class OpInputError(OnnxExtError):
    """Inputs of a node (count, element types, known values) that the op cannot take."""

    def __init__(self, op: str, problem: str, node: str | None = None):
        where = f" (node {node!r})" if node else ""
        super().__init__(f"{op}{where}: {problem}")
        self.op, self.problem, self.node = op, problem, node

    def at(self, node: str | None) -> "OpInputError":
        return self if node is None or self.node else OpInputError(self.op, self.problem, node)
