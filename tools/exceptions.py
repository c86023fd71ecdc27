from core.errors import DomainError


class CatalogError(DomainError):
    """Base class of the catalog's errors."""


class CatalogInputError(CatalogError):
    """An override (or another catalog write) is malformed; ``errors`` name each bad field."""

    http_status = 400
    code = "invalid_input"

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__("; ".join(errors))


class DefinitionNotFoundError(CatalogError):
    """No such definition in service."""

    http_status = 404
    code = "not_found"
