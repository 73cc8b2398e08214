"""What a careful moderator would keep as a name: the clean-up every phrase goes through before it
becomes an entity. Kind nouns after a technology are dropped ("a three-node Elasticsearch
cluster" gives "Elasticsearch"), possessives are split ("Quillstack's search service"), and
fragments (versions, ticket numbers, "e.g", single letters, bare generic nouns, environment
variables, code identifiers, quantities) are refused."""

from __future__ import annotations

import re
from functools import lru_cache

from kg.extraction.gazetteer import AMBIGUOUS_LOWER, CAPITALISED_TYPES, KNOWN_TYPES
from kg.extraction.lexicon import DETERMINERS, VERB_PATTERNS
from kg.extraction.nouns import english_word
from kg.extraction.scoring import GENERIC_NOUNS, is_fragment

# Nouns that only say what kind of instance a technology is (guidelines: "Kind nouns").
KIND_NOUNS = {
    "database", "databases", "db", "cluster", "clusters", "instance", "instances", "server",
    "servers", "box", "boxes", "node", "nodes", "image", "images", "container", "containers",
    "files", "file", "repo", "repos", "app", "apps", "build", "builds", "cli", "plugin",
    "plugins", "integration", "connector", "driver", "chart", "template", "workflow",
    "workflows", "playbook", "playbooks", "script", "scripts", "job", "jobs", "workers",
    "cache", "store", "stack", "broker", "board", "boards", "probe", "fleet", "gpus", "gpu",
    "viewer", "monolith", "crate", "package", "gem", "module", "project", "setup", "install",
    "installation", "deployment", "library", "framework", "sdk",
    "queue", "queues", "bucket", "buckets", "target", "version",
    "minis", "mini", "dashboard", "code", "config", "port",
    "bindings", "wrapper", "tables", "schema", "runtime", "codebase", "account",
    "program", "programs", "binary", "binaries",
}  # fmt: skip
# Nouns that after a name say only which of its things is meant ("the Kafka topic", "a Redis
# subchart", "EXIF data"): dropped like kind nouns, but not themselves kinds of a technology.
_TRAILING_NOUNS = KIND_NOUNS | {
    "topic", "table", "subchart", "repository", "realm", "namespace", "chip", "chips", "sample",
    "samples", "dictionary", "dictionaries", "notifications", "endpoints", "profiles", "capacity",
    "supercomputer", "supercomputers", "data", "model", "gateway", "tests", "account",
}  # fmt: skip
# Kind nouns that never make a component of their own: "my home assistant instance".
_INSTANCE_NOUNS = {"instance", "instances", "install", "installation", "container", "containers"}
KNOWN_KIND_NOUNS = {"service", "server", "backend", "frontend", "engine", "page", "site"}
# Words that make a phrase an event or a quantity, not a thing.
EVENT_WORDS = {
    "upgrade", "upgrades", "migration", "run", "runs", "bump", "fix", "fixes",
    "rollout", "outage", "incident", "change", "changes", "update", "updates", "refactor",
    "rewrite", "goes", "say", "says", "warnings", "warning", "errors", "error", "rather",
    "routing", "tracing", "support", "handful", "half", "side", "whole", "else", "lot",
    "users", "people", "folks", "stuff", "work", "part", "parts", "piece",
}  # fmt: skip
NUMBER_WORDS = {
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "dozen",
    "forty", "twenty", "thirty", "fifty", "hundred", "several", "multiple", "various",
    "few", "many", "some", "most", "all", "both", "each", "every", "other", "another",
}  # fmt: skip
JUDGING = {
    "flaky", "old", "older", "new", "newer", "small", "tiny", "big", "large", "huge", "slow",
    "fast", "current", "existing", "shiny", "little", "whole", "entire", "broken", "ancient",
    "aging", "ageing", "creaky", "trusty", "beloved", "dreaded", "separate", "single",
}  # fmt: skip
# Acronyms for a practice or a generic capability, not a product (guidelines: "Excluded").
GENERIC_ACRONYMS = {
    "ci", "cd", "ci/cd", "api", "apis", "sso", "qa", "ota", "dns", "tls", "ssl", "vpn", "llm",
    "llms", "ui", "ux", "pr", "prs", "sdk", "cli", "os", "vm", "vms", "gpu", "cpu", "ram",
    "ssd", "hdd", "url", "urls", "id", "ids", "faq", "eta", "mvp", "poc", "sla", "slo",
    "slos", "kpi", "rfc", "adr", "wip", "lgtm", "tbd", "asap", "utc", "am", "pm", "a.m",
    "p.m", "ok", "vat", "eu", "us", "uk", "lts", "p8", "rpc", "http/json", "json api",
    "kb", "mb", "gb", "tb", "pb", "kib", "mib", "gib", "tib",
    "ml", "ai", "etl", "http", "https", "ttl", "ssh", "tcp", "udp", "ip", "sql query", "cdn", "iot", "pcb", "oom", "tl;dr", "imo", "afaik", "btw", "io",
    "sms", "mfa", "2fa", "otp", "gps", "ocr", "crm", "erp", "cms", "rest", "e2e",
}  # fmt: skip
_ENV_VAR = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+")
_CODE = re.compile(r"\w+\.[A-Z_a-z]\w*\(|\w+\.\w*_\w*$|^[a-z]\w*\.[A-Z]\w*$|[()=<>{}\[\]`$]")
FILE_NAME = re.compile(
    r"[\w./-]+\.(?:py|txt|toml|ya?ml|json|jsonl|cfg|ini|md|rst|ts|js|go|rs|c|h|cpp|kt|swift|"
    r"lua|gd|rb|php|sh|csv|parquet|lock|conf|env|sql|ipynb|xml|html|css|tf|dockerfile)$",
    re.IGNORECASE,
)
_MEASURE = re.compile(r"\d+(?:\.\d+)?(?:h|m|s|ms|k|x|gb|mb|tb|kb|%|am|pm|mm/s|s/s)", re.I)
_VERSION = re.compile(r"v?\d+(?:\.\d+)*\+?", re.IGNORECASE)
_QUANTITY = re.compile(r"\d[\d,.]*(?:[a-zA-Z%]{0,3}|-\w+)")


def known_type(name: str) -> str | None:
    """The gazetteer's type; a name in plain English words only when written with a capital."""
    low = name.lower()
    found = KNOWN_TYPES.get(low)
    if found is None and name != low:
        found = CAPITALISED_TYPES.get(low)
    return found


def known_lower(word: str) -> bool:
    """A lower-case word that names a technology wherever it stands ("pandas", "nginx")."""
    return word.lower() in KNOWN_TYPES and word.lower() not in AMBIGUOUS_LOWER


def name_like(word: str) -> bool:
    """Spelt like a name: a capital, a digit, a dot or hyphen inside, or known lower-case."""
    return (
        any(c.isupper() for c in word)
        or known_lower(word)
        or bool(re.search(r"\w[.\-/+]\w", word))
        or "_" in word.strip("_")
    )


def is_code(name: str) -> bool:
    if FILE_NAME.fullmatch(name):
        return False
    if re.fullmatch(r"[A-Z]\w*(?:Error|Exception|Warning)|[A-Z]{2,}(?:ed|ing|s)", name):
        return True  # "AttributeError", "OOMed", "502ing"
    return bool(_ENV_VAR.fullmatch(name) or _CODE.search(name) or name.startswith("-"))


def _generic(name: str) -> bool:
    low = name.lower()
    return low in GENERIC_ACRONYMS or low in GENERIC_NOUNS or low in KIND_NOUNS


@lru_cache(maxsize=8192)
def refused(name: str) -> bool:
    low = name.lower()
    words = low.split()
    if not words or is_fragment(name) or is_code(name):
        return True
    if low in GENERIC_ACRONYMS or low in GENERIC_NOUNS or _QUANTITY.fullmatch(name):
        return True
    if words[0] in NUMBER_WORDS or (_QUANTITY.fullmatch(words[0]) and len(words) > 1):
        return True
    if re.search(r"#\d|\b[A-Z]{2,}-\d+\b", name) or words[0] in ("pr", "issue", "ticket"):
        return True  # "PR #412", "OPS-2291"
    if _COMPOUND_ADJECTIVE.search(words[-1]):
        return True  # "eBPF-based", "30M-row": an adjective made of a name, not the name
    if any(_MEASURE.fullmatch(w) for w in words):
        return True  # "took 4h", "10k rows", "3x faster"
    if any(w in EVENT_WORDS for w in words) or words[-1] in ("release", "releases"):
        return True
    if len(words) == 1 and re.fullmatch(r"[a-z]+(?:ed|ing)", low) and not known_lower(low):
        return _verb_form(low)  # "flashed", "caching"; not "tinyfeed"
    if words[0] in _UNITS or low in DETERMINERS:
        return True  # "TB Zarr" (a size before a name), "The"
    if all(w in _CALENDAR or (w.endswith("s") and w[:-1] in _CALENDAR) for w in words):
        return True  # "Tuesday", "Mondays": a date, never a name
    if _DATE_OR_TIME.fullmatch(name):
        return True  # "Q4", "UTC+13"
    if len(words) > 1 and words[0] in _NUMBERED and _VERSION.fullmatch(words[1]):
        return True  # "Release 4.6 of Wardroom", "Devlog 14": a version or an issue, labelled
    if any(w in _SEPARATORS for w in words):
        return True  # "Changelog — Pantry", "daily_rollup | 02": a heading's or a table's marks
    if len(words) == 2 and words[1].isdigit() and known_type(name.split()[0]) is None:
        return _generic(words[0]) or english_word(words[0])  # "version 5", "Table 2", "API 34"
    return len(name) > 60


# A relation's verb opening a line before a name ("Requires PyTorch 2.3"); not one a noun's
# plural spells too ("Streams", "Logs").
_VERBS_S = {
    w
    for w in (p.words[0] for p in VERB_PATTERNS)
    if w.endswith("s") and len(w) > 3 and not english_word(w)
}
_SEPARATORS = {"-", "--", "—", "–", "|", "·", "•", "»", "→", "::"}  # noqa: RUF001
_CALENDAR = {
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january",
    "february", "march", "april", "june", "july", "august", "september", "october",
    "november", "december", "weekday", "weekend",
}  # fmt: skip
_DATE_OR_TIME = re.compile(r"Q[1-4](?:\s+'?\d{2,4})?|(?:UTC|GMT)\s*[+\-−]\s*\d{1,2}(?::\d{2})?")  # noqa: RUF001
# Words that only label a version or an issue when a number follows them.
_NUMBERED = {
    "release", "version", "devlog", "changelog", "episode", "chapter", "week", "day",
    "sprint", "milestone", "iteration", "round", "session",
}  # fmt: skip


_COMPOUND_ADJECTIVE = re.compile(
    r".-(?:based|row|rows|style|like|driven|powered|backed|aware|friendly|only|wide|free|"
    r"compatible|specific|native|ready|heavy|bound|first)$"
)
_UNITS = {"kb", "mb", "gb", "tb", "pb", "kib", "mib", "gib", "tib"}


def _verb_form(low: str) -> bool:
    """An -ed or -ing form of an English word: "flashed" (flash), "caching" (cache), "planned"
    (plan); "tinyfeed" or "seedling" are no such form of anything in the word list."""
    cut = 2 if low.endswith("ed") else 3
    stem = low[:-cut]
    forms = [stem, stem + "e", low[:-1]]
    if len(stem) > 1 and stem[-1] == stem[-2]:
        forms.append(stem[:-1])  # "planned", "shipping"
    return any(english_word(w) for w in forms if len(w) > 2)


def _without_kind_noun(words: list[str]) -> list[str]:
    """The words of a name less a trailing noun that only says what kind of thing it is."""
    # A kind noun after a versioned name: "PostgreSQL 16 database", "Ender 3 board".
    if (
        len(words) > 2
        and words[-1].lower() in KIND_NOUNS
        and re.fullmatch(r"v?\d+(?:\.\d+)*", words[-2])
        and name_like(words[-3])
    ):
        words = words[:-1]
    # "my home assistant instance": an instance of what is named, never a part of its own.
    if len(words) > 1 and words[-1].lower() in _INSTANCE_NOUNS and not _generic(words[-2]):
        words = words[:-1]
    # A kind noun after a technology: "Svelte app", "SQS queue", "MySQL database".
    # Only a noun written as a common noun: "Proxmox Backup Server" is a product's own name.
    while (
        len(words) > 1
        and words[-1].lower() in _TRAILING_NOUNS
        and not words[-1].istitle()
        and name_like(words[-2])
    ):
        modifier = " ".join(words[:-1])
        if (
            not any(c.isupper() for c in modifier)
            and not known_lower(words[-2])
            and not re.search(r"[_.]", modifier)
        ):
            break  # "billing-export job", "notifications worker": a named component
        if _generic(" ".join(words[:-1])):
            break  # "ETL job", "CI pipeline": the acronym alone is not a name
        if refused(" ".join(words[:-1])):
            break  # "VS Code": what is left would be no name, so the noun is part of it
        words = words[:-1]
    # "a tiny Go service", "the HTML page": a kind noun only after a known technology.
    if (
        len(words) > 1
        and words[-1].lower() in KNOWN_KIND_NOUNS
        and known_type(" ".join(words[:-1])) is not None
    ):
        words = words[:-1]
    return words


# A passage names the same things many times, and the word lists are fixed once imported.
@lru_cache(maxsize=8192)
def clean(surface: str) -> str | None:
    """The name a moderator would keep for ``surface``, or None."""
    words = surface.replace("’", "'").split()  # noqa: RUF001
    words = [w.strip("`*\"'") for w in words]
    words = [w for w in words if w]
    if not words:
        return None
    # A leading verb form from the start of a sentence: "Leaving Brightwave", "Asked Priyanka".
    if (
        len(words) > 1
        and (re.fullmatch(r"[A-Z][a-z]+(?:ed|ing)", words[0]) or words[0].lower() in _VERBS_S)
        and words[0].lower() not in KNOWN_TYPES
        and not _generic(" ".join(words[1:]))
        and words[1][:1].isupper()
    ):
        words = words[1:]
    # Judging adjectives are not part of a name: "the flaky integration tests".
    while len(words) > 1 and words[0] in JUDGING:
        words = words[1:]
    # Leading modifiers before a name: "three-node Elasticsearch", "small Rust", "newer AGP".
    strong = next(
        (k for k, w in enumerate(words) if any(c.isupper() for c in w) or known_lower(w)), None
    )
    if (
        strong
        and all(w.islower() and not known_lower(w) for w in words[:strong])
        and not _generic(" ".join(words[strong:]))
    ):
        words = words[strong:]
    words = _without_kind_noun(words)
    # Range marks and wildcards: "Python 3.9+" gives "Python 3.9"; "5.x" is not kept.
    if len(words) > 1 and re.fullmatch(r"v?\d+(?:\.\d+)*\.x", words[-1], re.IGNORECASE):
        words = words[:-1]
    words[-1] = words[-1].rstrip("+") if len(words) > 1 else words[-1]
    name = " ".join(words).strip(",;:")
    if name.lower().startswith("@"):
        name = name[1:]
    return None if refused(name) else name
