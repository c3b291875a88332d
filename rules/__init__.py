"""What we conclude: a pure, deterministic rule engine over typed values (no I/O, no Slack, no database)."""
