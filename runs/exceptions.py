from core.errors import DomainError


class RunError(DomainError):
    """Base class of the runs app's errors."""


class RunInputError(RunError):
    """A run's input does not match its flow's input schema; nothing was created."""

    http_status = 400
    code = "invalid_input"
    what = "The run input"

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__(f"{self.what} is invalid: " + "; ".join(errors))


class RunNotFoundError(RunError):
    """No such run in the caller's tenant (another tenant's run does not exist for them)."""

    http_status = 404
    code = "not_found"


class UnknownDefinitionError(RunError):
    """The flow or agent to run is not in the catalog."""

    http_status = 404
    code = "unknown_definition"


class RunStateError(RunError):
    """The run is not in a status that allows what was asked."""

    http_status = 409
    code = "conflict"


class LostClaimError(RunError):
    """The executor no longer holds the run (cancelled, or taken over after its claim expired)."""


class ScheduleInputError(RunInputError):
    """A schedule's fields are not valid; nothing was saved."""

    what = "The schedule"


class ScheduleNotFoundError(RunError):
    """No such schedule that the caller may see."""

    http_status = 404
    code = "not_found"


class ScheduleForbiddenError(RunError):
    http_status = 403
    code = "forbidden"


class PrincipalError(RunError):
    """No person would stand behind the run: nothing was started."""

    http_status = 403
    code = "no_principal"


class CancelForbiddenError(RunError):
    """The caller may see the run but not cancel it."""

    http_status = 403
    code = "forbidden"


class ConversationNotFoundError(RunNotFoundError):
    """No such conversation of the caller's (another person's does not exist for them)."""
