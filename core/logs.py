"""Log lines about a run carry its id, and production writes them as JSON, one object a line.

``core.logcontext.about_run(run_id)`` marks everything logged inside it (in this thread or task, and in the
tool threads the engine starts from it) as being about that run; ``RunIdFilter`` copies the
mark onto each record, so a handler's formatter can write it.
"""

import logging

from pythonjsonlogger.json import JsonFormatter

from core.logcontext import current_run
from core.secrets import scrub_text


class RunIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "run_id", None) is None:
            run_id = current_run()
            if run_id is not None:
                record.run_id = run_id
        return True


class SecretsFilter(logging.Filter):
    """No log line carries a secret: a provider key, a credential or a decision-link token in a
    line's message or traceback becomes ``[REDACTED]`` (``core.secrets.scrub_text``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        traceback = record.exc_text or (
            logging.Formatter().formatException(record.exc_info) if record.exc_info else ""
        )
        scrubbed = scrub_text(message)
        if scrubbed != message:
            record.msg, record.args = scrubbed, None
        if traceback and (cleaned := scrub_text(traceback)) != traceback:
            record.exc_info, record.exc_text = None, cleaned
        return True


class JsonLineFormatter(JsonFormatter):
    """One JSON object a line: time, level, logger, message, run_id when the line is about a run,
    any other ``extra`` given, and the traceback as ``exc_info``."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("fmt", "%(asctime)s %(levelname)s %(name)s %(message)s")
        kwargs.setdefault("rename_fields", {"asctime": "time", "levelname": "level", "name": "logger"})
        kwargs.setdefault("datefmt", "%Y-%m-%dT%H:%M:%S%z")
        super().__init__(*args, **kwargs)


def logging_config(*, log_format: str, level: str) -> dict:
    formatter = (
        {"()": "core.logs.JsonLineFormatter"}
        if log_format == "json"
        else {"format": "%(levelname)s %(name)s %(message)s"}
    )
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {
            "run_id": {"()": "core.logs.RunIdFilter"},
            "secrets": {"()": "core.logs.SecretsFilter"},
        },
        "formatters": {"default": formatter},
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": "default",
                "filters": ["run_id", "secrets"],
            }
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            # Django's own console handler would write its lines a second time, unformatted.
            "django": {"level": "INFO", "handlers": []},
            # With immediate tasks, a line per task start and finish drowns out everything else.
            "django.tasks": {"level": "WARNING"},
            # aiosmtpd narrates every SMTP connection; Kindgi logs what each mail came to.
            "mail.log": {"level": "WARNING"},
        },
    }
