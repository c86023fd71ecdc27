"""Exceptions raised by the pack SDK."""


class KindgiError(Exception):
    """Base class of every error the ``kindgi`` package raises."""


class DefinitionError(KindgiError, ValueError):
    """A tool, agent, flow or pack definition is wrong.

    The message names the definition and the field, so the pack author can go
    straight to the line to fix.
    """


class DefinitionErrors(KindgiError):
    """Every definition error found while loading a set of packs, reported at once."""

    def __init__(self, errors: list[str]):
        self.errors = list(errors)
        listing = "\n".join(f"  - {error}" for error in self.errors)
        super().__init__(f"{len(self.errors)} definition error(s):\n{listing}")


class ToolError(KindgiError):
    """Raised by a tool on purpose: the model receives it as data, with its code and hint.

    ``code`` is a short upper-case identifier (``ORDER_NOT_FOUND``);
    ``recommended_action`` tells the model what to do next.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        recommended_action: str = "",
        retryable: bool = False,
    ):
        super().__init__(message)
        self.code = code
        self.message = message
        self.recommended_action = recommended_action
        self.retryable = retryable
