"""Where a client finds its server and token: arguments, then ``KINDGI_URL`` and ``KINDGI_TOKEN``,
then what ``kindgi dev`` saved (``$KINDGI_CONFIG`` or ``~/.config/kindgi/config.json``), then
``http://127.0.0.1:8000`` with no token."""

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_URL = "http://127.0.0.1:8000"


def config_path() -> Path:
    if os.environ.get("KINDGI_CONFIG"):
        return Path(os.environ["KINDGI_CONFIG"])
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "kindgi" / "config.json"


def load_saved() -> dict:
    try:
        saved = json.loads(config_path().read_text())
    except (OSError, ValueError):
        return {}
    return saved if isinstance(saved, dict) else {}


@dataclass(frozen=True)
class Settings:
    url: str
    token: str | None = field(repr=False)  # never in a traceback's locals or a log line


def resolve(url: str | None = None, token: str | None = None) -> Settings:
    saved = load_saved()
    return Settings(
        url=(url or os.environ.get("KINDGI_URL") or saved.get("url") or DEFAULT_URL).rstrip("/"),
        token=token or os.environ.get("KINDGI_TOKEN") or saved.get("token"),
    )
