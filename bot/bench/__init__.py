"""`gpu-advisor bench`: answer, HTTP, digest, start-up and memory figures against the DESIGN §8 budgets."""
