"""Document the error body every endpoint may answer with, and that request bodies are strict."""

ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string", "example": "invalid_input"},
                "message": {"type": "string"},
                "details": {
                    "type": "object",
                    "properties": {
                        "errors": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "One line per bad field: /<json-pointer>: <message>.",
                        },
                        "fields": {
                            "type": "object",
                            "additionalProperties": {"type": "string"},
                            "description": "Each bad field's message, keyed by its pointer without the "
                            "leading slash (input/orderId); an unknown field says so, naming the known ones.",
                        },
                    },
                },
            },
        }
    },
}

ERRORS = {
    "400": "The request is malformed or a field is invalid (a NUL character anywhere in a JSON body "
    "is refused: it cannot be stored).",
    "401": "No API token or session, or the token is not valid.",
    "403": "Not allowed: no tenant, not a reviewer, a role too low, or not a tenant admin.",
    "404": "No such resource in your tenant.",
    "405": "This path does not take this method.",
    "409": "The resource is not in a state that allows this (already decided, not suspended…); or its "
    "Idempotency-Key was used with another request, or its first request is still being answered.",
}
# On the answers of a POST that takes Idempotency-Key, when the answer is the first one, again.
REPLAYED = {
    "Idempotent-Replayed": {
        "description": "true when this is the answer to the first request with this Idempotency-Key, "
        "given again: nothing was done a second time.",
        "schema": {"type": "string", "enum": ["true"]},
    }
}
# Only where a body is sent.
BODY_ERRORS = {
    "413": "The request body is larger than KINDGI_MAX_REQUEST_BYTES.",
    "415": "The body is not application/json.",
}


def add_error_responses(result, generator, request, public):
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for name, schema in schemas.items():
        # Request bodies refuse fields they do not declare (core.api.fields.StrictSerializer).
        if name.endswith("Request") and schema.get("type") == "object":
            schema["additionalProperties"] = False
    schemas["Error"] = ERROR_SCHEMA
    reference = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            errors = ERRORS | (BODY_ERRORS if "requestBody" in operation else {})
            for code, description in errors.items():
                operation.setdefault("responses", {}).setdefault(
                    code, {"description": description, "content": reference}
                )
            if any(
                parameter.get("name") == "Idempotency-Key" for parameter in operation.get("parameters", [])
            ):
                for code, response in operation["responses"].items():
                    if code.startswith("2"):
                        response.setdefault("headers", {}).update(REPLAYED)
    return result
