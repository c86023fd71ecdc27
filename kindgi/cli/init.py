"""`kindgi init <pack-name>`: a new pack that loads, and passes its own tests, as written.

The files come from ``kindgi/pack_template`` (``*.tmpl``, with ``__PACK__`` for the pack's name,
``__MODULE__`` for its package, ``__TITLE__``, and ``__DIR__``/``__PARENT__`` for where it is).
"""

import keyword
import shlex
import sys
import tempfile
from importlib import resources
from pathlib import Path

from kindgi.cli.errors import OK, USAGE_ERROR, CliError
from kindgi.naming import is_name

TEMPLATE = "pack_template"
SUFFIX = ".tmpl"


def module_name(pack_name: str) -> str:
    return pack_name.replace("-", "_")


def create_pack(pack_name: str, *, directory: Path) -> Path:
    """Write the pack into ``directory/<module>``; return that folder. Nothing is written unless
    all of it is."""
    if not is_name(pack_name):
        raise CliError(
            f"{pack_name!r} is not a pack name: lowercase letters, digits and dashes, starting with "
            "a letter (e.g. my-pack)",
            USAGE_ERROR,
        )
    module = module_name(pack_name)
    if not module.isidentifier() or keyword.iskeyword(module) or not module[0].isalpha():
        raise CliError(
            f"{pack_name!r} must start with a letter: its package would be {module!r}", USAGE_ERROR
        )
    directory = directory.resolve()
    if not directory.is_dir():
        raise CliError(f"--dir {directory} is not a folder", USAGE_ERROR)
    target = directory / module
    if target.exists():
        raise CliError(f"{target} already exists: choose another pack name or --dir", USAGE_ERROR)
    if module in sys.stdlib_module_names or module in {"kindgi", "packs", "tests"}:
        raise CliError(f"the package {module!r} would hide another of that name: choose another", USAGE_ERROR)

    words = {
        "__PACK__": pack_name,
        "__MODULE__": module,
        "__TITLE__": pack_name.replace("-", " ").capitalize(),
        "__DIR__": shlex.quote(str(target)),
        "__PARENT__": str(directory),
    }
    with tempfile.TemporaryDirectory(dir=directory, prefix=f".{module}-") as scratch:
        staged = Path(scratch) / module
        _copy(resources.files("kindgi") / TEMPLATE, staged, words)
        staged.rename(target)
    return target


def _copy(source, destination: Path, words: dict[str, str]) -> None:
    destination.mkdir(parents=True)
    for item in source.iterdir():
        name = item.name
        if item.is_dir():
            if name != "__pycache__":
                _copy(item, destination / _fill(name, words), words)
            continue
        if not name.endswith(SUFFIX):
            continue
        text = _fill(item.read_text(encoding="utf-8"), words)
        (destination / _fill(name.removesuffix(SUFFIX), words)).write_text(text, encoding="utf-8")


def _fill(text: str, words: dict[str, str]) -> str:
    for placeholder, value in words.items():
        text = text.replace(placeholder, value)
    return text


def init(pack_name: str, *, directory: str | None) -> int:
    target = create_pack(pack_name, directory=Path(directory or "."))
    module, parent = target.name, target.parent
    print(f"Created the pack {pack_name} in {target}: two tools, an agent, a flow, tests, and skills/.")
    print(f"Test it:   kindgi test {shlex.quote(str(target))}")
    print(f"Serve it:  kindgi dev --pack {shlex.quote(str(target))}")
    print("Or add it to KINDGI_PACKS in the shell that runs Kindgi:")
    pythonpath = shlex.quote(str(parent)) + '"${PYTHONPATH:+:$PYTHONPATH}"'
    print(
        f'  export KINDGI_PACKS="${{KINDGI_PACKS:-packs.my_pack,packs.acme_ops,packs.kindgi_mail}},{module}" '
        f"PYTHONPATH={pythonpath}"
    )
    return OK
