"""The answering layer: decides what to answer (intent, card, what to ask back) and hands `render/` decided values.

`pipeline` (text or button → `Reply`), `routes` (which card for a parsed request), `advice` (the engine run
behind a recommendation and its buttons), `actions` (the state a button carries), `reply` (the `Reply`
value), `commands` (the `/gpu` subcommand and language choice), `language` (the question's own language).
"""
