"""Cards: Jinja2 templates rendered to Block Kit JSON or terminal text, in eight languages."""
