"""E2B SDK (placeholder until the SDK lands)."""
