"""What every app's API shares: fields, strict serializers, pagination, the parser, permissions,
the error body and its schema."""
