"""docker-compose.yml, the Dockerfile and .env.example agree with what the code reads.

The variables the code reads are found by parsing the source for environment reads
(``env.str("X")``, ``env_int("X", …)``, ``os.environ.get("X")``, ``env["X"]``, …), so a new
setting without an ``.env.example`` entry, or an entry nobody reads any more, fails here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
NAME = r"""["']([A-Z][A-Z0-9_]+)["']"""
# env_int("X"…), env.str("X"…), os.environ.get("X"…), getenv("X"), and the private readers
# of settings modules (_choice, _integer, _word_list, …), whose first argument is the name.
SINGLE_READ = re.compile(
    r"\b(?:env\w*|_\w+|getenv|(?:environ|env)\.(?:get|str|bool|int|float|list|json|url|db_url|db))"
    r"\(\s*" + NAME
)
SUBSCRIPT_READ = re.compile(r"\b(?:env|environ)\[\s*" + NAME + r"\s*\]")
MULTI_READ = re.compile(r"""\b_env\(\s*\w+\s*,\s*((?:["'][A-Z][A-Z0-9_]+["']\s*,?\s*)+)\)""")
EXAMPLE_LINE = re.compile(r"^#?\s?([A-Z][A-Z0-9_]*)=(.*)$")
APPS = ("legacymind", "thoughts", "kg", "innervoice", "agent", "mcpserver")


def read_in(paths: list[Path]) -> set[str]:
    names: set[str] = set()
    for path in paths:
        source = path.read_text()
        names |= set(SINGLE_READ.findall(source)) | set(SUBSCRIPT_READ.findall(source))
        for group in MULTI_READ.findall(source):
            names |= set(re.findall(NAME, group))
    return names


def python_files(*folders: str) -> list[Path]:
    return [
        p
        for folder in folders
        for p in (ROOT / folder).rglob("*.py")
        if "migrations" not in p.parts
    ]


def app_sources() -> list[Path]:
    """Everything that reads the environment when the app runs: the apps and gunicorn's
    configuration (WEB_CONCURRENCY, WEB_THREADS, ...)."""
    return [*python_files(*APPS), ROOT / "gunicorn.conf.py"]


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


@pytest.fixture(scope="module")
def example() -> dict[str, str]:
    """NAME -> documented value, for every variable line (commented or not) of .env.example."""
    entries: dict[str, str] = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        match = EXAMPLE_LINE.match(line)
        if match:
            assert match.group(1) not in entries, f"{match.group(1)} listed twice"
            entries[match.group(1)] = match.group(2).strip()
    return entries


def test_the_env_read_parser_finds_known_reads():
    # Guards the regexes: each form of read in the code base is recognised.
    found = read_in(
        [
            ROOT / "legacymind" / "settings.py",
            ROOT / "legacymind" / "conf" / "embeddings.py",
            *(ROOT / "legacymind" / "providers").glob("*.py"),
        ]
    )
    for name in ("EMBEDDING_PROVIDER", "EMBEDDING_RPS", "DATABASE_URL", "DJANGO_ALLOWED_HOSTS"):
        assert name in found  # env.str, multi-line env_choice, env_float, env.list
    for name in ("IV_CLI_CMD", "IV_SYNTH_CLI_CMD", "IV_CLI_ARGS_JSON", "GROK_TIMEOUT"):
        assert name in found  # _env(env, A, B), env["X"], env.get("X", d)
    assert "HF_HUB_OFFLINE" not in found  # written with setdefault, not read as a setting
    thoughts = read_in([ROOT / "legacymind" / "conf" / "thoughts.py"])
    assert "THINK_TAG_WHITELIST" in thoughts  # a module's own reader, _word_list("X", …)


def test_compose_has_the_four_services_with_health_checks(compose):
    services = compose["services"]
    assert {"db", "redis", "web", "worker"} <= set(services)
    for name in ("db", "redis", "web", "worker"):
        check = services[name].get("healthcheck")
        assert check and check.get("test"), f"{name} has no healthcheck"
    assert services["db"]["image"] == "pgvector/pgvector:pg16"
    assert services["redis"]["image"].startswith("redis:")
    web = " ".join(services["web"]["command"])
    assert "gunicorn --config gunicorn.conf.py" in web and "migrate" in web
    assert services["worker"]["command"][:4] == ["celery", "-A", "legacymind", "worker"]
    for name in ("web", "worker"):
        deps = services[name]["depends_on"]
        assert deps["db"]["condition"] == deps["redis"]["condition"] == "service_healthy"


def test_beat_runs_only_when_a_periodic_task_exists(compose):
    from legacymind.celery import app

    has_schedule = bool(app.conf.beat_schedule)
    assert ("beat" in compose["services"]) == has_schedule


def test_every_variable_compose_passes_to_the_app_is_read_by_it(compose):
    read = read_in(app_sources())
    for name in ("web", "worker"):
        passed = set(compose["services"][name]["environment"])
        assert passed, name
        assert passed <= read, f"{name} passes {sorted(passed - read)} which nothing reads"
        assert {"DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY", "AGENT_STATE_SECRET"} <= passed
        assert "DJANGO_ALLOWED_HOSTS" in passed


def test_compose_interpolations_are_documented(compose, example):
    raw = (ROOT / "docker-compose.yml").read_text()
    interpolated = set(re.findall(r"(?<!\$)\$\{([A-Z][A-Z0-9_]*)", raw))
    assert {"DJANGO_SECRET_KEY", "AGENT_STATE_SECRET", "POSTGRES_PASSWORD"} <= interpolated
    assert interpolated <= set(example), sorted(interpolated - set(example))


def test_env_example_lists_every_variable_the_settings_and_providers_read(example):
    sources = [
        ROOT / "legacymind" / "settings.py",
        *(ROOT / "legacymind" / "conf").glob("*.py"),
        *(ROOT / "legacymind" / "providers").glob("*.py"),
        *(ROOT / "legacymind" / "management" / "commands").glob("*.py"),
        ROOT / "gunicorn.conf.py",
    ]
    read = read_in(sources)
    assert len(read) > 50
    missing = read - set(example)
    assert not missing, f".env.example lacks {sorted(missing)}"


def test_env_example_has_no_stale_entries(example):
    raw = (ROOT / "docker-compose.yml").read_text()
    compose_only = set(re.findall(r"\$\{([A-Z][A-Z0-9_]*)", raw))
    stale = set(example) - read_in(app_sources()) - compose_only
    assert not stale, f".env.example lists {sorted(stale)} which nothing reads"


def test_env_example_explains_each_variable_under_a_section_heading():
    lines = (ROOT / ".env.example").read_text().splitlines()
    headings = [line for line in lines if line.startswith("# --- ")]
    assert "# --- Thoughts / think pipeline" in "\n".join(headings)
    section = None
    explained = False
    for line in lines:
        if line.startswith("# --- "):
            section, explained = line, False
        elif EXAMPLE_LINE.match(line):
            assert section, f"{line} is above the first section heading"
            assert explained, f"{line} has no comment above it"
        elif line.startswith("#") and line.strip("# "):
            explained = True
        elif not line.strip():
            explained = False


def test_documented_defaults_are_the_real_defaults(example):
    """A commented ``# NAME=value`` line states the default: load settings with nothing set
    and compare every documented default that is also a Django setting of the same name."""
    names = sorted(example)
    script = (
        "import json, django; django.setup(); from django.conf import settings as s; "
        f"print(json.dumps({{n: getattr(s, n) for n in {names!r} if hasattr(s, n)}}, default=str))"
    )
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "DJANGO_SECRET_KEY": "x",
        "AGENT_STATE_SECRET": "y",
        "DATABASE_URL": "postgres://nobody@127.0.0.1:9/none",
        "DJANGO_SETTINGS_MODULE": "legacymind.settings",
    }
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    actual = json.loads(proc.stdout.strip().splitlines()[-1])
    lines = (ROOT / ".env.example").read_text().splitlines()
    commented = {
        m.group(1) for line in lines if line.startswith("#") and (m := EXAMPLE_LINE.match(line))
    }
    compared = 0
    for name, value in actual.items():
        if name not in commented or name == "DATABASE_URL":
            continue
        documented = example[name]
        compared += 1
        if isinstance(value, bool):
            assert documented in (("1", "true") if value else ("0", "false")), name
        elif isinstance(value, int | float):
            assert float(documented) == float(value), f"{name}: {documented} != {value}"
        elif isinstance(value, list):
            assert documented.split(",") == [str(v) for v in value], name
        elif value is None:
            assert documented == "", name
        else:
            assert documented.lower() == str(value).lower(), f"{name}: {documented} != {value}"
    assert compared >= 30


def test_dockerfile_builds_the_cpu_image_as_a_non_root_user():
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim", text, re.M)
    torch = text.index('"torch==2.13.0"')
    assert "download.pytorch.org/whl/cpu" in text[text.rindex("\n", 0, torch) : torch]
    assert torch < text.index("pip install --no-deps -e .")
    assert "collectstatic --noinput" in text
    user = re.findall(r"^USER (\S+)", text, re.M)
    assert user and user[-1] not in ("root", "0")
    assert "gunicorn" in text.split("CMD", 1)[1] and "gunicorn.conf.py" in text.split("CMD", 1)[1]
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", "var", ".git", ".env"} <= set(ignored)


def test_csrf_origin_default_follows_the_published_port(compose):
    """A browser posts the admin's and journal's forms from the port compose publishes, so the
    default trusted origin must move with WEB_PORT."""
    web = compose["services"]["web"]
    published = web["ports"][0]
    assert published.startswith("${WEB_PORT:-8000}:"), published
    origins = web["environment"]["DJANGO_CSRF_TRUSTED_ORIGINS"]
    assert origins == "${DJANGO_CSRF_TRUSTED_ORIGINS:-http://localhost:${WEB_PORT:-8000}}"
