"""The registry of the packs named in ``settings.KINDGI_PACKS``, built once per process."""

import functools

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

from kindgi import Registry, load_registry


@functools.cache
def get_registry() -> Registry:
    """Raise ``kindgi.DefinitionErrors`` when a pack is wrong; the ``kindgi.E001`` check says so too."""
    return load_registry(settings.KINDGI_PACKS)


@receiver(setting_changed)
def _forget_registry(*, setting: str, **kwargs) -> None:
    if setting == "KINDGI_PACKS":
        get_registry.cache_clear()
