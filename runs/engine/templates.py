"""Fill a flow template's references with the flow input and earlier nodes' outputs."""

from collections.abc import Mapping
from typing import Any

from kindgi.flows import REF_KEY, parse_ref


class TemplateError(Exception):
    pass


def _follow(value: Any, path: tuple[str, ...], *, pointer: str) -> Any:
    for segment in path:
        if isinstance(value, Mapping) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            raise TemplateError(f"{pointer} has no value (no {segment!r} there)")
    return value


def resolve_template(template: Any, *, flow_input: Any, outputs: Mapping[str, Any]) -> Any:
    if isinstance(template, list):
        return [resolve_template(item, flow_input=flow_input, outputs=outputs) for item in template]
    if isinstance(template, dict):
        if set(template) == {REF_KEY}:
            pointer = template[REF_KEY]
            ref = parse_ref(pointer)
            if ref.node is None:
                return _follow(flow_input, ref.path, pointer=pointer)
            if ref.node not in outputs:
                raise TemplateError(f"{pointer} refers to node {ref.node!r}, which has not run")
            return _follow(outputs[ref.node], ref.path, pointer=pointer)
        return {k: resolve_template(v, flow_input=flow_input, outputs=outputs) for k, v in template.items()}
    return template
