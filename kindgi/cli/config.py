"""Where the CLI finds its server and token: flags, then the environment, then the config file
that `kindgi dev` writes (``$KINDGI_CONFIG`` or ``~/.config/kindgi/config.json``, mode 0600)."""

import json
import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_URL = "http://127.0.0.1:8000"


def config_path() -> Path:
    if os.environ.get("KINDGI_CONFIG"):
        return Path(os.environ["KINDGI_CONFIG"])
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "kindgi" / "config.json"


def load_saved() -> dict:
    try:
        return json.loads(config_path().read_text())
    except (OSError, ValueError):
        return {}


def save(url: str, token: str) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as file:
        json.dump({"url": url, "token": token}, file)
    os.chmod(path, 0o600)  # also when the file existed with looser permissions
    return path


@dataclass(frozen=True)
class Settings:
    url: str
    token: str | None


def resolve(url: str | None, token: str | None) -> Settings:
    saved = load_saved()
    return Settings(
        url=(url or os.environ.get("KINDGI_URL") or saved.get("url") or DEFAULT_URL).rstrip("/"),
        token=token or os.environ.get("KINDGI_TOKEN") or saved.get("token"),
    )
