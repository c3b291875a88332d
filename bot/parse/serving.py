"""How a served or run model is asked for: concurrency, request rate, context, tokens/s targets, quantisation,
KV-cache type, serving engine and latency/throughput preference (the `Ask` fields of the serving issue).

Numbers are read only next to the words that give them their meaning ("100 concurrent users", "并发100",
"50 QPS", "30 tok/s per user"); a bare number is never a concurrency. Tool and format names are the same in
every language, so they live here; the words around the numbers are listed per language below.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from bot.parse.anchors import has_any
from bot.parse.numbers import MULTIPLIER_RE, scaled
from bot.parse.vocabulary import PhraseTable, build_table

MAX_CONCURRENCY = 1_000_000
MAX_RATE = 1e9
K_TOKENS = 1024  # "8k context" is 8192 tokens (bot.parse.quantities)

# Weight formats as people name them -> the Ask's `quantization` values.
QUANTIZATIONS: dict[str, str] = {
    "awq": "awq", "gptq": "gptq", "exl2": "exl2", "exllamav2": "exl2", "mxfp4": "mxfp4", "nvfp4": "nvfp4",
    "fp8": "fp8", "float8": "fp8", "w8a8": "int8", "int8": "int8", "8-bit": "int8", "8bit": "int8",
    "8 bit": "int8", "8 bits": "int8", "8-bits": "int8", "load_in_8bit": "int8", "8比特": "int8", "8位": "int8",
    "8비트": "int8", "8ビット": "int8", "int4": "int4", "4-bit": "int4", "4bit": "int4", "4 bit": "int4",
    "4 bits": "int4", "4-bits": "int4", "w4a16": "int4", "4比特": "int4", "4位": "int4", "4비트": "int4",
    "4ビット": "int4", "nf4": "nf4", "load_in_4bit": "nf4", "bnb 4bit": "nf4", "bnb-4bit": "nf4",
    "bitsandbytes 4bit": "nf4", "bitsandbytes": "nf4", "bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16",
    "float16": "fp16", "half precision": "fp16", "半精度": "fp16", "gguf": "gguf", "q2_k": "gguf-q2_k",
    "q3_k_m": "gguf-q3_k_m", "q4_0": "gguf-q4_0", "q4_k_m": "gguf-q4_k_m", "q4_k": "gguf-q4_k_m",
    "q4km": "gguf-q4_k_m", "q5_k_m": "gguf-q5_k_m", "q5_k": "gguf-q5_k_m", "q6_k": "gguf-q6_k",
    "q8_0": "gguf-q8_0", "q8": "gguf-q8_0", "q4": "int4",
}
# A GGUF level named next to "gguf" keeps the level; "8-bit"/"4-bit" beside GGUF means its Q8_0/Q4_K_M.
_GGUF_OF = {"int8": "gguf-q8_0", "int4": "gguf-q4_k_m"}
ENGINES: dict[str, str] = {
    "vllm": "vllm", "sglang": "sglang", "tgi": "tgi", "text-generation-inference": "tgi",
    "text generation inference": "tgi", "tensorrt-llm": "tensorrt-llm", "tensorrt llm": "tensorrt-llm",
    "trt-llm": "tensorrt-llm", "trtllm": "tensorrt-llm", "llama.cpp": "llama.cpp", "llamacpp": "llama.cpp",
    "llama-cpp": "llama.cpp", "llama-server": "llama.cpp", "ollama": "ollama", "mlx": "mlx", "mlx-lm": "mlx",
    "lm studio": "lmstudio", "올라마": "ollama", "オラマ": "ollama", "ollama run": "ollama", "lmstudio": "lmstudio", "exllama": "exllama", "exllamav2": "exllama",
    "tabbyapi": "exllama", "transformers": "transformers", "hf transformers": "transformers",
}
# Engines that serve many users (continuous batching) vs. run a model for one person.
SERVING_ENGINES = frozenset({"vllm", "sglang", "tgi", "tensorrt-llm"})
KV_CACHE: dict[str, str] = {
    "fp8 kv": "fp8", "kv cache fp8": "fp8", "kv-cache fp8": "fp8", "kv fp8": "fp8", "fp8 kv cache": "fp8",
    "kv-cache-dtype fp8": "fp8", "kv_cache_dtype fp8": "fp8", "kv cache in fp8": "fp8", "fp8 kv-cache": "fp8",
    "q8_0 kv": "q8_0", "kv q8_0": "q8_0", "kv cache q8_0": "q8_0", "-ctk q8_0": "q8_0", "ctk q8_0": "q8_0",
    "q4_0 kv": "q4_0", "kv q4_0": "q4_0", "kv cache q4_0": "q4_0", "-ctk q4_0": "q4_0", "ctk q4_0": "q4_0",
    "fp16 kv": "fp16", "kv cache fp16": "fp16", "bf16 kv": "bf16", "kv cache bf16": "bf16",
}
PRIORITIES: dict[str, str] = {
    "low latency": "latency", "latency": "latency", "ttft": "latency", "time to first token": "latency",
    "responsive": "latency", "延迟": "latency", "延遲": "latency", "低延迟": "latency", "지연": "latency",
    "레이턴시": "latency", "レイテンシ": "latency", "遅延": "latency", "latencia": "latency", "latenz": "latency",
    "latence": "latency", "độ trễ": "latency", "max throughput": "throughput", "high throughput": "throughput",
    "throughput": "throughput", "吞吐": "throughput", "吞吐量": "throughput", "처리량": "throughput",
    "スループット": "throughput", "rendimiento": "throughput", "durchsatz": "throughput", "débit": "throughput",
    "thông lượng": "throughput", "首字": "latency", "首token": "latency", "首 token": "latency", "首字延迟": "latency",
    "응답 속도": "latency", "응답속도": "latency", "レスポンス": "latency", "応答速度": "latency", "tiempo de respuesta": "latency",
    "antwortzeit": "latency", "temps de réponse": "latency", "thời gian phản hồi": "latency", "fast responses": "latency",
}

_NUM = rf"(\d+(?:[.,]\d+)?)\s?({MULTIPLIER_RE})?"
# The words that make a number a concurrency, after it ("100 users") or before it ("并发100").
_USERS_AFTER = (
    r"(?:(?:concurrent|simultaneous|parallel|active|gleichzeitigen?|parallelen?|aktiven?)\s)?(?:users?|requests?|"
    r"nutzern?|anfragen|sessions?|clients?|"
    r"people|employees|customers|agents|personas|empleados|personnes|employés|leute|personen|mitarbeiter(?:n)?|"
    r"developers|devs|engineers|researchers|students|colleagues|teammates|staff|analysts|desarrolladores|"
    r"ingenieros|estudiantes|colegas|développeurs|ingénieurs|étudiants|collègues|entwickler(?:n)?|kollegen|"
    r"ingenieure(?:n)?|studenten|studierende(?:n)?|"
    r"mitarbeitende(?:n)?)(?:\s(?:at once|concurrently|simultaneously|in parallel|a la vez|al mismo tiempo|"
    r"en même temps|simultanément|gleichzeitig))?|"
    r"concurrent|concurrency|个?并发|個?並發|个?用户同时|个?人同时|并发用户|名?(?:의)?\s?동시\s?(?:접속|사용자|요청)|명|"
    r"[个個位名]?(?:人|用户|用戶|同事|员工|員工|开发者|開發者|开发人员|程序员|研究员|学生|學生)(?:同时|同時)?|"
    r"名?(?:の)?(?:開発者|エンジニア|社員|研究者|学生)|同時接続|ユーザー|リクエスト|usuarios?(?:\s(?:simultáneos|concurrentes))?|nutzer(?:n)?|anfragen|"
    r"utilisateurs?(?:\s(?:simultanés|concurrents))?|người(?: dùng)?(?:\s(?:đồng thời))?|lập trình viên|nhân viên|kỹ sư"
)
_USERS_BEFORE = (
    r"concurrency(?: of)?|concurrent users|concurrent requests|并发(?:数|量|用户)?|並發|同时在线|同時在線|"
    r"동시\s?접속(?:자)?|동시\s?사용자|동시\s?요청|同時接続(?:数)?|同時アクセス(?:数)?|同時リクエスト(?:数)?|"
    r"max[-_ ]num[-_ ]seqs|--parallel|-np|batch of|team of|同時|同时|開発者|エンジニア|社員|ユーザー(?:数)?"
)
# "500 requests per second" is a rate, not 500 requests in flight.
_NOT_A_RATE = r"(?!\s?(?:per|a|/|每|mỗi|pro|par|por|je)\s?(?:second|sec|s\b|秒|giây|sekunde|seconde|segundo))"
# Words between a quantity's word and its number: "并发大概50", "QPS大概20", "每秒至少20个token".
_ABOUT = r"(?:(?:大概|大约|大約|约|約|左右|至少|要出|要|出|能|需要|峰值|最大|最多|最低|およそ|約|약|최대|최소|around|about|roughly|at least|~|≈)\s?)?"
_RPS_AFTER = (
    r"(?:qps|rps|req/s|reqs/s|requests?/s|req/sec|reqs/sec|requests?/sec|requests? per second|requests? per sec|requests? a second|个?请求每秒|requêtes par seconde|"
    r"anfragen pro sekunde|anfragen je sekunde|peticiones por segundo|solicitudes por segundo|requests? mỗi giây|"
    r"yêu cầu mỗi giây|リクエスト/秒|件/秒)"
)
_RPS_BEFORE = r"(?:qps|每秒(?:请求|請求)?|초당\s?(?:요청)?|秒間(?:リクエスト)?)"
# Requests per minute ("1000 peticiones por minuto", "每分钟200个请求"): read as per second (/ 60).
_RPM_AFTER = (
    r"(?:rpm|qpm|req/min|reqs/min|requests?/min|requests? (?:per|a) minute|peticiones por minuto|solicitudes por minuto|"
    r"requêtes par minute|anfragen pro minute|requests? mỗi phút|yêu cầu mỗi phút|个?请求每分钟|件/分|リクエスト/分)"
)
_RPM_BEFORE = r"(?:每分钟|每分鐘|분당|毎分)"
_TPS = r"(?:tok/s|tokens?/s|tokens?/sec|tokens? per second|tokens? a second|t/s|tps|token/秒|tokens?每秒|个?token每秒|토큰/초|トークン/秒)"
_TPS_BEFORE = r"(?:每秒|毎秒|초당|秒間|每秒生成)"
_PER_USER = re.compile(r"per (?:user|request|stream|sequence|person)|each|每(?:个)?(?:用户|人|路)|사용자당|유저당|1인당|ユーザーあたり|ユーザーごと|por usuario|pro nutzer|par utilisateur|mỗi người")
_TOTAL = re.compile(r"total|aggregate|overall|in all|combined|总|總|합계|전체|合計|全体|en total|insgesamt|au total|tổng")
_ANCHORS = ("user", "request", "session", "client", "max-num-seqs", "max_num_seqs", "max num seqs", "people", "concurren", "并发", "並發", "同时", "同時",
            "用户", "用戶", "同事", "员工", "員工", "persona", "emplead", "personne", "employé", "leute", "person",
            "mitarbeit", "developer", "devs", "engineer", "researcher", "student", "colleague", "teammate", "staff",
            "analyst", "desarroll", "ingenier", "estudiant", "colega", "développeur", "ingénieur", "étudiant", "collègue",
            "entwickler", "kollegen", "studenten", "studierende", "开发", "開發", "程序员", "研究员", "学生", "學生", "開発者",
            "エンジニア", "社員", "研究者", "lập trình viên", "nhân viên", "kỹ sư",
            "동시", "명", "人", "ユーザー", "usuario", "nutzer", "utilisateur", "người", "qps", "rps", "req",
            "每秒", "초당", "秒", "tok", "t/s", "tps", "parallel", "-np", "batch of", "employees", "customers",
            "agents", "simultan", "team of", "anfragen", "peticiones", "solicitudes", "requête", "mỗi giây", "yêu cầu",
            "リクエスト", "gleichzeitig", "毎秒", "minut", "rpm", "qpm", "phút", "每分", "분당", "毎分")


@dataclass(frozen=True, slots=True)
class ServingFound:
    concurrency: int | None = None
    requests_per_s: float | None = None
    tokens_per_s: float | None = None
    tokens_per_s_scope: str | None = None
    context_tokens: int | None = None  # "at 8k", "输入16k": a context written without a context word
    quantization: str | None = None
    kv_cache_dtype: str | None = None
    engine: str | None = None
    priority: str | None = None
    assumed: dict[str, str] = field(default_factory=dict)


@functools.lru_cache(maxsize=1)
def _tables() -> dict[str, PhraseTable]:
    return {"quant": build_table(QUANTIZATIONS), "engine": build_table(ENGINES), "kv": build_table(KV_CACHE),
            "priority": build_table(PRIORITIES)}


@functools.lru_cache(maxsize=1)
def _patterns() -> dict[str, re.Pattern[str]]:
    return {
        "users_after": re.compile(rf"(?<![0-9a-z_.]){_NUM}\s?(?:\+\s?)?(?:{_USERS_AFTER})(?![a-z]|-[a-z]){_NOT_A_RATE}"),
        "users_before": re.compile(rf"(?:{_USERS_BEFORE})\s?(?:=|:|of|is|为|為|은|는|が|は)?\s?{_ABOUT}{_NUM}(?![0-9a-z])"),
        "rps_after": re.compile(rf"(?<![0-9a-z_.]){_NUM}\s?{_RPS_AFTER}(?![a-z])"),
        "rps_before": re.compile(rf"{_RPS_BEFORE}\s?(?:=|:)?\s?{_ABOUT}{_NUM}(?![0-9a-z])"),
        "rpm_after": re.compile(rf"(?<![0-9a-z_.]){_NUM}\s?{_RPM_AFTER}(?![a-z])"),
        "rpm_before": re.compile(rf"{_RPM_BEFORE}\s?(?:=|:)?\s?{_ABOUT}{_NUM}\s?(?:个|件|개)?\s?(?:请求|請求|요청|リクエスト)"),
        "tps_after": re.compile(rf"(?<![0-9a-z_.]){_NUM}\s?\+?\s?{_TPS}"),
        "tps_before": re.compile(rf"{_TPS_BEFORE}\s?{_ABOUT}{_NUM}\s?(?:个|個)?\s?(?:tokens?|token|토큰|トークン)"),
        # "at 8k", "输入16k", "8k・同時64": a context size with no context word (only where a model is served or run)
        "context": re.compile(r"(?<![0-9a-z.$€¥£])(1|2|4|8|16|32|64|128|256|512|1024)\s?k(?![a-z0-9])(?!\s?(?:tokens? of|users?|requests?|samples|examples|rows|steps|명|人|条|件|개|\$|€|円|元|원))"),
    }


def _number(match: re.Match[str]) -> float | None:
    value = scaled(match.group(1).replace(",", "."), match.group(2))
    return value if value is not None and 0 < value < MAX_RATE else None


def _first(pattern_names: tuple[str, ...], text: str) -> tuple[float, re.Match[str]] | None:
    found = []
    for name in pattern_names:
        for match in _patterns()[name].finditer(text):
            value = _number(match)
            if value is not None:
                found.append((match.start(), value, match))
                break
    if not found:
        return None
    _, value, match = min(found, key=lambda f: f[0])
    return value, match


# Output tokens of a typical chat request: vLLM's serving benchmark on ShareGPT generated 203,068 tokens for 1,000
# requests (vllm-project/vllm PR #18566, `vllm bench serve ... --dataset-path Aeala/ShareGPT_Vicuna_unfiltered`).
OUTPUT_TOKENS_PER_REQUEST = 203.0


def find_serving(text: str) -> ServingFound:
    """The serving fields of a normalised message; every one of them is None when it is not said."""
    tables = _tables()
    assumed: dict[str, str] = {}
    quantization = _quantization(text, tables["quant"])
    concurrency = requests = tokens = scope = None
    if has_any(text, _ANCHORS):
        users = _first(("users_after", "users_before"), text)
        if users is not None and users[0] >= 1 and users[0] == int(users[0]) and users[0] <= MAX_CONCURRENCY:
            concurrency = int(users[0])
        rate = _first(("rps_after", "rps_before"), text)
        per_minute = _first(("rpm_after", "rpm_before"), text) if rate is None else None
        requests = rate[0] if rate is not None else None
        if per_minute is not None:
            requests = round(per_minute[0] / 60, 3)
            assumed["requests_per_s"] = f"{per_minute[0]:g} requests per minute = {requests:g} per second"
        tps = _first(("tps_after", "tps_before"), text)
        if tps is not None:
            tokens, match = tps
            window = text[max(0, match.start() - 24): match.end() + 24]
            scope = "per_user" if _PER_USER.search(window) else "total" if _TOTAL.search(window) else None
            if scope is None:
                scope = "per_user"
                assumed["tokens_per_s"] = f"{tokens:g} tokens/s read as per user (no 'total' said)"
    if requests and tokens is None:  # a request rate is an output rate the plan must sustain
        tokens, scope = round(requests * OUTPUT_TOKENS_PER_REQUEST), "total"
        assumed["tokens_per_s"] = (f"{requests:g} requests/s read as {tokens:,} output tokens/s in all "
                                   f"({OUTPUT_TOKENS_PER_REQUEST:g} output tokens a request)")
    context = _context(text)
    if context is not None:
        assumed["context_tokens"] = f"'{context // K_TOKENS}k' read as a context of {context} tokens (k = 1024)"
    return ServingFound(
        concurrency=concurrency, requests_per_s=requests, tokens_per_s=tokens, tokens_per_s_scope=scope,
        context_tokens=context, quantization=quantization, kv_cache_dtype=tables["kv"].first(text), engine=tables["engine"].first(text),
        priority=tables["priority"].first(text), assumed=assumed,
    )


def _context(text: str) -> int | None:
    """A bare "8k" / "32k" (a power of two): the context a served or run model needs, prompt plus output."""
    if "k" not in text:
        return None
    m = _patterns()["context"].search(text)
    return int(m.group(1)) * K_TOKENS if m else None


def _quantization(text: str, table: PhraseTable) -> str | None:
    """The weight format named; a KV-cache dtype ("fp8 kv cache") is not the weights' format."""
    kv_spans = [(s, e) for _, s, e in _tables()["kv"].find(text)]
    found: list[str] = [str(v) for v, s, e in table.find(text) if not any(s >= ks and e <= ke for ks, ke in kv_spans)]
    if not found:
        return None
    if "gguf" in found:
        levels = [v for v in found if v.startswith("gguf-")]
        if levels:
            return str(levels[0])
        other = next((_GGUF_OF[v] for v in found if v in _GGUF_OF), None)
        return other or "gguf"
    quantised = [v for v in found if v not in ("bf16", "fp16")]
    return str(quantised[0] if quantised else found[0])


# "How fast" without a target: the answer leads with the rate (the serving card puts it before the fit line).
_SPEED_QUESTION = re.compile(
    r"how (?:many|much) (?:tokens?|tok)\b|how fast|what speed|tokens?/s\s?\?|qué velocidad|cuántos tokens|"
    r"wie schnell|wie viele tokens|quelle vitesse|combien de tokens|nhanh (?:thế nào|như thế nào|cỡ nào)|tốc độ|"
    r"bao nhiêu token|多快|速度|每秒多少|どのくらい(?:の)?速|何トークン|얼마나 빠|속도"
)


def asks_speed(text: str) -> bool:
    """Whether the question asks how fast a model runs ("how many tokens/s does a 4090 get", "速度怎么样")."""
    return _SPEED_QUESTION.search(text.casefold()) is not None
