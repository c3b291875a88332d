"""The one validation layer of `estimate`: flags and `--input` lines, checked once, with the range in the message.

Numbers must be finite, positive and inside a physical range (a model of 10^308 billion parameters or
a NaN of epochs is a typing slip, not a workload); whole numbers must be whole; text must be text
without control characters; switches must be true or false. Flags and JSON lines share this one
layer, so `--seq-len nan` and `{"seq_len": "nan"}` get the same message.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, Field, ValidationError, create_model

from bot.cli.context import CliError


@dataclass(frozen=True, slots=True)
class Bound:
    """A physical range: `low`..`high` in `unit`; `whole` for counts."""

    low: float
    high: float
    unit: str
    whole: bool = False

    def describe(self) -> str:
        kind = "a whole number" if self.whole else "a number"
        return f"{kind} from {_number(self.low)} to {_number(self.high)} {self.unit}".rstrip()


# Limits a real job stays far inside. Sources: the largest published models are ~2T parameters
# (10,000B leaves room); the longest context windows are 10M tokens (Llama 4 Scout); the largest
# training clusters hold ~100,000 GPUs; the largest pretraining sets are ~36T tokens per epoch.
BOUNDS: Mapping[str, Bound] = {
    "params_b": Bound(0.001, 10_000, "billion parameters"),
    "seq_len": Bound(1, 10_485_760, "tokens", whole=True),
    "batch_size": Bound(1, 65_536, "sequences per GPU", whole=True),
    "lora_rank": Bound(1, 65_536, "", whole=True),
    "gpus": Bound(1, 100_000, "GPUs", whole=True),
    "resolution": Bound(64, 16_384, "pixels", whole=True),
    "tokens": Bound(1, 1e15, "tokens per epoch"),
    "samples": Bound(1, 1_000_000_000_000, "samples per epoch", whole=True),
    "epochs": Bound(0.001, 1_000, "epochs"),
    "budget_usd": Bound(0.01, 10_000_000_000, "US dollars"),
    "deadline_hours": Bound(0.01, 87_600, "hours"),
    "concurrency": Bound(1, 1_000_000, "sequences in flight", whole=True),
    "context_tokens": Bound(1, 10_485_760, "tokens", whole=True),
    "tokens_per_s": Bound(0.001, 10_000_000, "tokens/s"),
    "frames": Bound(1, 100_000, "frames per clip", whole=True),
    # Household and industrial power runs from a few cents to about a dollar per kWh; 10 leaves room.
    "electricity_usd_per_kwh": Bound(0.001, 10, "US dollars per kWh"),
}
TEXT_KEYS = ("model", "recipe", "optimizer", "precision", "lora_targets", "gpu", "family", "framework_version")
SWITCH_KEYS = ("offload", "spot", "text_encoder_training", "cache_latents", "compile")
MAX_TEXT_CHARS = 200


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


def _no_bool(value: object) -> object:
    """JSON `true` is not the number 1 (pydantic's lax mode would take it as one)."""
    if isinstance(value, bool):
        raise ValueError("a switch is not a number")
    return value


def _clean_text(value: object) -> object:
    if isinstance(value, str) and any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in value):
        raise ValueError("contains control characters")
    if isinstance(value, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in value):  # undecodable argv bytes
        raise ValueError("contains bytes that are not UTF-8")
    return value


def _ranged(bound: Bound) -> Any:
    """The pydantic type of one ranged field: whole or real, finite, within the bound, never a bool."""
    kind: Any = int if bound.whole else float
    return Annotated[kind, BeforeValidator(_no_bool), Field(ge=bound.low, le=bound.high, allow_inf_nan=False)] | None


Text = Annotated[str, BeforeValidator(_clean_text), Field(strict=True, max_length=MAX_TEXT_CHARS)] | None
Switch = Annotated[bool, Field(strict=True)] | None
MONEY_KEYS = ("budget_usd", "electricity_usd_per_kwh")  # Decimal, written "$1,500" as often as 1500: require_money reads them
# The typed fields of one workload, built from the tables above (choices are checked by the caller).
_FIELDS: dict[str, Any] = {
    **{key: (_ranged(bound), None) for key, bound in BOUNDS.items() if key not in MONEY_KEYS},
    **{key: (Text, None) for key in TEXT_KEYS},
    **{key: (Switch, None) for key in SWITCH_KEYS},
}
EstimateFields = create_model("EstimateFields", __config__=ConfigDict(extra="ignore", frozen=True), **_FIELDS)


def require_estimate_values(values: Mapping[str, Any], *, flags: bool = False) -> dict[str, Any]:
    """`values` with numbers typed and ranged; every bad field named with its range (CliError).

    `flags`: name fields as the command line does (`--params-b`), else as `--input` lines do (`params_b`).
    """
    try:
        checked = EstimateFields.model_validate(dict(values)).model_dump()
        money = {key: require_money(values, key) for key in MONEY_KEYS if key in values}
    except ValidationError as error:
        problems = [_problem(e, values) for e in error.errors(include_url=False)]
        raise CliError(_named("; ".join(dict.fromkeys(problems)), flags)) from None
    except CliError as error:
        raise CliError(_named(str(error), flags)) from None
    return {**values, **{k: v for k, v in checked.items() if k in values}, **money}


def _named(message: str, flags: bool) -> str:
    """`params_b: ...` as `--params-b: ...` for flags (field names lead each problem)."""
    if not flags:
        return message
    parts = [part.partition(": ") for part in message.split("; ")]
    return "; ".join(f"--{key.replace('_', '-')}{sep}{rest}" if sep else key for key, sep, rest in parts)


def _problem(error: Mapping[str, Any], values: Mapping[str, Any]) -> str:
    key = str(error["loc"][0]) if error["loc"] else "?"
    given = values.get(key)
    kind = str(error["type"])
    if key in BOUNDS:
        return f"{key}: {_what(kind, given, BOUNDS[key])} ({BOUNDS[key].describe()})"
    if key in SWITCH_KEYS:
        return f"{key}: {_shown(given)} is not true or false"
    if kind in ("string_too_long", "too_long"):
        return f"{key}: longer than {MAX_TEXT_CHARS} characters"
    if kind == "value_error":
        return f"{key}: {error.get('ctx', {}).get('error', 'is not text')}"
    return f"{key}: {_shown(given)} is not text"


def _what(kind: str, given: object, bound: Bound) -> str:
    if kind == "finite_number" or not _finite(given):
        return f"{_shown(given)} is not a finite number"
    if kind == "int_from_float":
        return f"{_shown(given)} is not a whole number"
    if kind in ("greater_than_equal", "greater_than") and _at_most_zero(given):
        return f"must be positive, got {_shown(given)}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than", "int_parsing_size"):
        return f"{_shown(given)} is out of range"
    return f"{_shown(given)} is not a number"


def _finite(given: object) -> bool:
    try:
        return math.isfinite(float(given))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return True  # not a number at all: said otherwise


def _at_most_zero(given: object) -> bool:
    try:
        return float(given) <= 0  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _shown(given: object) -> str:
    text = repr(given) if isinstance(given, str) else str(given).lower() if isinstance(given, bool) else str(given)
    return text if len(text) <= 40 else text[:37] + "..."


def require_money(values: Mapping[str, Any], key: str) -> Decimal | None:
    """An amount in US dollars ("$1,500", 1500, "1500.50"): finite, positive, within BOUNDS[key]."""
    value = values.get(key)
    if value is None:
        return None
    bound = BOUNDS[key]
    if isinstance(value, bool) or not isinstance(value, (str, int, float, Decimal)):
        raise CliError(f"{key}: {_shown(value)} is not an amount in US dollars ({bound.describe()})")
    if isinstance(value, float) and not math.isfinite(value):
        raise CliError(f"{key}: must be a positive amount, got {_shown(value)} ({bound.describe()})")
    try:
        amount = Decimal(str(value).strip().lstrip("$").replace(",", ""))
    except InvalidOperation:
        raise CliError(f"{key}: {_shown(value)} is not an amount in US dollars ({bound.describe()})") from None
    if not amount.is_finite() or amount <= 0:
        raise CliError(f"{key}: must be a positive amount, got {_shown(value)} ({bound.describe()})")
    if not Decimal(str(bound.low)) <= amount <= Decimal(str(bound.high)):
        raise CliError(f"{key}: {_shown(value)} is out of range ({bound.describe()})")
    return amount
