"""Approvals and decisions as plain JSON for webhooks and sockets: the API serializers' shape."""

import json
from typing import Any

from rest_framework.renderers import JSONRenderer

from approvals.models import Approval, Decision
from core.api.representation import represent


def _plain(data) -> Any:
    return json.loads(JSONRenderer().render(data))


def approval_json(approval: Approval) -> dict[str, Any]:
    from approvals.api.serializers import ApprovalSerializer

    return _plain(represent(ApprovalSerializer, approval))


def decision_json(decision: Decision) -> dict[str, Any]:
    from approvals.api.serializers import DecisionSerializer

    return _plain(represent(DecisionSerializer, decision))
