"""Price digests and alerts: the `/gpu digest|alert` commands (`commands`, worded by `texts`), the digest
card (`card`) and the clock that posts them exactly once per period (`scheduler`)."""
