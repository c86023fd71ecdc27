"""An in-memory public status page standing in for the real one."""

import threading
from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass(frozen=True)
class Post:
    message: str
    posted_at: datetime


class StatusPage:
    def __init__(self):
        self._lock = threading.Lock()
        self._posts: list[Post] = []

    def publish(self, message: str) -> Post:
        post = Post(message=message, posted_at=datetime.now(UTC))
        with self._lock:
            self._posts.append(post)
        return post

    @property
    def posts(self) -> list[Post]:
        with self._lock:
            return list(self._posts)

    def reset(self) -> None:
        with self._lock:
            self._posts.clear()


STATUS_PAGE = StatusPage()
