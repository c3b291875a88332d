"""The shell: parsing, rendering, locales, Slack listeners, CLI, scheduler."""
