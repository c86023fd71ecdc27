from core.errors import DomainError


class MailError(DomainError):
    """Base class of the mail app's errors."""


class MailboxNotFoundError(MailError):
    http_status = 404
    code = "not_found"


class MailboxInputError(MailError):
    http_status = 400
    code = "invalid_input"

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = errors
