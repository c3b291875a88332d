"""The Slack app: Bolt listeners that translate Slack requests to the core and replies back."""
