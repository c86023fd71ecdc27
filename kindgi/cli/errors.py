"""Exit codes: 0 success, 1 an API or run error, 2 a usage error."""

OK = 0
API_ERROR = 1
USAGE_ERROR = 2


class CliError(Exception):
    """One line for stderr, and the exit code."""

    def __init__(self, message: str, exit_code: int = API_ERROR):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
