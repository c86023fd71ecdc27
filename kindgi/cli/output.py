import json
import sys
from typing import Any

from kindgi.summaries import without_controls

TABLE_COLUMNS = {
    "runs": ["id", "flowId", "agentId", "status", "dryRun", "createdAt"],
    "approvals": ["id", "title", "status", "requiredRole", "createdAt"],
    "reviewers": ["user", "role", "displayName"],
    "tools": ["id", "version", "readOnly", "mutating", "effects"],
    "agents": ["id", "version", "name", "gatesEnabled"],
    "flows": ["id", "version", "description"],
    "journal": ["sequence", "kind", "nodeId", "durationMs", "time"],
    "connections": ["id", "app", "status", "scopes", "connectedAt", "lastUsedAt"],
    "schedules": ["id", "name", "agentId", "flowId", "cron", "owner", "enabled", "nextRunAt"],
    "grants": [
        "id",
        "granter",
        "toolPattern",
        "principal",
        "agentId",
        "uses",
        "maxCalls",
        "status",
        "expiresAt",
    ],
}


def show(data: Any, *, output: str = "json", kind: str = "") -> None:
    if output == "table" and isinstance(data, dict) and "items" in data and kind in TABLE_COLUMNS:
        print(table(data["items"], TABLE_COLUMNS[kind]))
    else:
        json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")


def plain(text: Any) -> str:
    """``text`` as one line for a terminal: what the server says (an error's message, a name a
    person chose, an MCP server's error) may hold escapes that would rewrite the screen."""
    return " ".join(without_controls(str(text)).split())


def _cell(value: Any) -> str:
    if isinstance(value, list):
        return (
            plain(
                ", ".join(
                    f"{v['kind']} {v['resource']}" if isinstance(v, dict) and "kind" in v else str(v)
                    for v in value
                )
            )
            or "-"
        )
    if value is None or value == "":
        return "-"
    return plain(value)


def table(rows: list[dict], columns: list[str]) -> str:
    cells = [[_cell(row.get(column)) for column in columns] for row in rows]
    widths = [max([len(column), *(len(line[i]) for line in cells)]) for i, column in enumerate(columns)]
    lines = ["  ".join(column.ljust(width) for column, width in zip(columns, widths, strict=True))]
    lines += [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)) for line in cells
    ]
    return "\n".join(line.rstrip() for line in lines) if rows else lines[0] + "\n(none)"
