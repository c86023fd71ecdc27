"""What answers an agent: the model protocol the engine talks to, and how a model fails."""

from typing import Protocol

from kindgi import ModelReply, ModelRequest


class ModelError(Exception):
    """A model could not answer. ``retryable`` says whether asking again may help."""

    def __init__(self, message: str, *, retryable: bool = False):
        super().__init__(message)
        self.message = message
        self.retryable = retryable


class ChatModel(Protocol):
    model_name: str
    # What it can do (``kindgi.capabilities.FEATURES``), checked before it is asked.
    features: frozenset[str]

    def respond(self, request: ModelRequest) -> ModelReply: ...
