class ApprovalError(Exception):
    """Base class of the approvals app's errors."""


class ApprovalNotFoundError(ApprovalError):
    """No such approval in the user's tenant."""


class NotAReviewerError(ApprovalError):
    """The user is not registered as a reviewer of the tenant."""


class DecisionForbiddenError(ApprovalError):
    """The reviewer may not decide this approval (role too low, four-eyes, not a named reviewer)."""


class ApprovalConflictError(ApprovalError):
    """The approval was already decided, expired or cancelled."""


class ApprovalInputError(ApprovalError):
    """A decision or a registration is malformed; ``errors`` name each bad field."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__("; ".join(errors))


class ImmutableRecordError(ApprovalError):
    """Decisions are an audit record: once written they are never changed or deleted."""
