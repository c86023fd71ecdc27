"""What every app's API shares: errors, pagination, tenant permissions."""
