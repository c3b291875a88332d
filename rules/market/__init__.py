"""The market: which offers can provide a plan and the cheapest (`offers`, indexed in `book`), cost per
job and buy vs rent (`cost`), and price changes between snapshots for digests (`changes`)."""
