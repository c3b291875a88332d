"""The durable answer queue: huey (SQLite by default, Redis or PostgreSQL to scale) plus request records."""
