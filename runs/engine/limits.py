"""The site's limits on what a run may do, as values: the driver reads them from the settings
(``runs.policy_context.engine_limits``) and hands them to the kernel, which reads no settings. The
defaults are the settings' own, so a test of the kernel alone is held to what a site is."""

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Limits:
    # How deep a call's arguments may nest, and how many bytes of JSON they may be, before
    # anything validates them (KINDGI_MAX_JSON_DEPTH, KINDGI_MAX_TOOL_ARGUMENTS_BYTES).
    max_json_depth: int = 32
    max_tool_arguments_bytes: int = 262_144
    # How many times one turn's model may ask for tools without answering (KINDGI_MAX_MODEL_STEPS).
    max_model_steps: int = 25
    # How many times a model is asked while its failure is retryable, and the pause before the
    # next ask, times the attempt (KINDGI_MODEL_ATTEMPTS, KINDGI_MODEL_RETRY_DELAY_SECONDS).
    model_attempts: int = 3
    model_retry_delay_seconds: float = 0.5


# The limits of a site that changes none of the settings.
DEFAULT_LIMITS = Limits()
