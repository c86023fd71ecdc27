"""The file `kindgi dev` saves its URL and token to, for the next `kindgi` command (and
``kindgi.Client()``) to find: ``$KINDGI_CONFIG`` or ``~/.config/kindgi/config.json``, mode 0600.
Reading it, with flags and the environment before it, is the client's (``kindgi.client.config``)."""

import json
import os
from pathlib import Path

from kindgi.client.config import config_path, load_saved, resolve

__all__ = ["load_saved", "resolve", "save"]


def save(url: str, token: str) -> Path:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as file:
        json.dump({"url": url, "token": token}, file)
    os.chmod(path, 0o600)  # also when the file existed with looser permissions
    return path
