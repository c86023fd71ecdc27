from core.errors import DomainError


class ApprovalError(DomainError):
    """Base class of the approvals app's errors."""


class ApprovalNotFoundError(ApprovalError):
    """No such approval in the user's tenant."""

    http_status = 404
    code = "not_found"


class NotAReviewerError(ApprovalError):
    """The user is not registered as a reviewer of the tenant."""

    http_status = 403
    code = "not_a_reviewer"


class DecisionForbiddenError(ApprovalError):
    """The reviewer may not decide this approval (role too low, four-eyes, not a named reviewer)."""

    http_status = 403
    code = "forbidden"


class ApprovalConflictError(ApprovalError):
    """The approval was already decided, expired or cancelled."""

    http_status = 409
    code = "conflict"


class ApprovalInputError(ApprovalError):
    """A decision or a registration is malformed; ``errors`` name each bad field."""

    http_status = 400
    code = "invalid_input"

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__("; ".join(errors))


class ImmutableRecordError(ApprovalError):
    """Decisions are an audit record: once written they are never changed or deleted."""


class GrantNotFoundError(ApprovalError):
    """No such grant, or not one the caller may see."""

    http_status = 404
    code = "not_found"


class GrantForbiddenError(ApprovalError):
    """The grant is not the caller's to give or to revoke."""

    http_status = 403
    code = "forbidden"
