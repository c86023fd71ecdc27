import json
import sys
from typing import Any

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


def _cell(value: Any) -> str:
    if isinstance(value, list):
        return (
            ", ".join(
                f"{v['kind']} {v['resource']}" if isinstance(v, dict) and "kind" in v else str(v)
                for v in value
            )
            or "-"
        )
    if value is None or value == "":
        return "-"
    return str(value)


def table(rows: list[dict], columns: list[str]) -> str:
    cells = [[_cell(row.get(column)) for column in columns] for row in rows]
    widths = [max([len(column), *(len(line[i]) for line in cells)]) for i, column in enumerate(columns)]
    lines = ["  ".join(column.ljust(width) for column, width in zip(columns, widths, strict=True))]
    lines += [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)) for line in cells
    ]
    return "\n".join(line.rstrip() for line in lines) if rows else lines[0] + "\n(none)"
