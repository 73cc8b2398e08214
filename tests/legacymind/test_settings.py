"""Start-up configuration: a bad value stops the process with a message naming the variable,
and REDIS_URL switches Celery and the cache between eager/database and Redis.

Each case starts a fresh interpreter, as a deployment would. DATABASE_URL points at a closed
port: loading settings never connects, so these tests neither need nor start a database.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.settings_process import ROOT, manage_process, settings_process

PRINT_SETTINGS = """
import json, django
django.setup()
from django.conf import settings as s
print(json.dumps({
    "eager": s.CELERY_TASK_ALWAYS_EAGER,
    "broker": s.CELERY_BROKER_URL,
    "backend": s.CELERY_RESULT_BACKEND,
    "cache": s.CACHES["default"]["BACKEND"],
    "cache_location": s.CACHES["default"].get("LOCATION"),
    "debug": s.DEBUG,
    "secret": s.SECRET_KEY,
    "agent_secret": s.AGENT_STATE_SECRET,
    "embedding_provider": s.EMBEDDING_PROVIDER,
    "allowed_hosts": s.ALLOWED_HOSTS,
    "secure_cookies": [s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE],
    "ssl_redirect": s.SECURE_SSL_REDIRECT,
    "proxy_ssl_header": s.SECURE_PROXY_SSL_HEADER,
    "hsts": s.SECURE_HSTS_SECONDS,
}))
"""


def start(**overrides: str | None) -> subprocess.CompletedProcess[str]:
    """Load the settings in a new process with a clean, production-like environment."""
    return settings_process(PRINT_SETTINGS, **overrides)


def loaded(**overrides: str | None) -> dict[str, object]:
    proc = start(**overrides)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"EMBEDDING_PROVIDER": "bogus"}, "EMBEDDING_PROVIDER"),
        ({"EMBEDDING_RPS": "abc"}, "EMBEDDING_RPS"),
        ({"EMBEDDING_RPS": "-1"}, "EMBEDDING_RPS"),
        ({"EMBEDDING_BATCH_SIZE": "many"}, "EMBEDDING_BATCH_SIZE"),
        ({"DJANGO_SECRET_KEY": None}, "DJANGO_SECRET_KEY"),
        ({"DJANGO_SECRET_KEY": ""}, "DJANGO_SECRET_KEY"),
        ({"AGENT_STATE_SECRET": None}, "AGENT_STATE_SECRET"),
        ({"EMBEDDING_PROVIDER": "openai"}, "OPENAI_API_KEY"),
        ({"REDIS_URL": "http://127.0.0.1:6379"}, "REDIS_URL"),
        ({"DATABASE_URL": "mysql://u:p@h/db"}, "DATABASE_URL"),
        ({"DATABASE_URL": "postgress://u:p@h/db"}, "DATABASE_URL"),  # was a long traceback
        ({"DATABASE_URL": "postgresql+psycopg://u:p@h/db"}, "DATABASE_URL"),
        ({"LOG_LEVEL": "loud"}, "LOG_LEVEL"),
        ({"PG_SHARED_BUFFERS": "lots"}, "PG_SHARED_BUFFERS"),
        ({"TAU_HIGH": "1.5"}, "TAU_HIGH"),
        ({"AGENT_POLICY": "greedy"}, "AGENT_POLICY"),
        ({"KG_AUTO_EXTRACT": "maybe"}, "KG_AUTO_EXTRACT"),
        ({"IV_HEURISTIC_MAX_ENTITIES": "2.5"}, "IV_HEURISTIC_MAX_ENTITIES"),
        ({"PROMETHEUS_MULTIPROC_DIR": "/etc/hostname/metrics"}, "PROMETHEUS_MULTIPROC_DIR"),
        ({"DJANGO_HTTPS": "maybe"}, "DJANGO_HTTPS"),
        ({"DJANGO_DEBUG": "maybe"}, "DJANGO_DEBUG"),  # was silently off
        ({"DB_CONN_MAX_AGE": "a minute"}, "DB_CONN_MAX_AGE"),  # was a bare ValueError
        ({"DB_CONN_MAX_AGE": "-5"}, "DB_CONN_MAX_AGE"),
        ({"PG_MAINTENANCE_WORK_MEM": "lots"}, "PG_MAINTENANCE_WORK_MEM"),  # failed per connection
        ({"OPENAI_BASE_URL": "localhost:8080/v1"}, "OPENAI_BASE_URL"),  # no scheme
        ({"DJANGO_HSTS_SECONDS": "3600"}, "DJANGO_HSTS_SECONDS"),  # without DJANGO_HTTPS
        ({"DJANGO_HTTPS": "1", "DJANGO_HSTS_SECONDS": "-5"}, "DJANGO_HSTS_SECONDS"),
        ({"IV_ALLOW_GROK": "flase"}, "IV_ALLOW_GROK"),  # was: Grok allowed
        ({"IV_CLI_TIMEOUT": "0"}, "IV_CLI_TIMEOUT"),  # was: each extraction's CLI stage failed
        ({"GROK_TIMEOUT": "soon"}, "GROK_TIMEOUT"),
        ({"IV_CLI_ARGS_JSON": "-m {model}"}, "IV_CLI_ARGS_JSON"),
        ({"IV_SYNTH_CLI_ARGS_JSON": '["-m", 2]'}, "IV_SYNTH_CLI_ARGS_JSON"),
    ],
)
def test_misconfiguration_stops_start_up_naming_the_variable(overrides, named):
    proc = start(**overrides)
    assert proc.returncode != 0
    assert "ImproperlyConfigured" in proc.stderr
    last_line = proc.stderr.strip().splitlines()[-1]
    assert named in last_line, last_line


def test_a_database_url_without_a_scheme_is_refused_without_printing_its_password():
    proc = start(DATABASE_URL="//legacymind:TopSecretPW@db:5432/legacymind")
    assert proc.returncode != 0
    assert "DATABASE_URL must be a PostgreSQL URL" in proc.stderr.strip().splitlines()[-1]
    assert "TopSecretPW" not in proc.stderr + proc.stdout


def test_options_in_the_database_url_are_kept_beside_the_apps_own():
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.DATABASES['default']['OPTIONS']['options'])"
    )
    url = "postgres://u:p@127.0.0.1:9/none?options=-c%20statement_timeout%3D5000"
    proc = settings_process(code, DATABASE_URL=url)
    assert proc.returncode == 0, proc.stderr[-1500:]
    options = proc.stdout.strip().splitlines()[-1]
    assert options.startswith("-c statement_timeout=5000 ")
    assert "-c hnsw.ef_search=" in options and "-c maintenance_work_mem=" in options


def test_a_relative_pgdata_is_the_projects_not_the_working_directorys():
    code = (
        "import django; django.setup(); from django.conf import settings as s; print(s.PGDATA_DIR)"
    )
    proc = settings_process(code, cwd=Path("/tmp"), LEGACYMIND_PGDATA="var/elsewhere")
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert proc.stdout.strip().splitlines()[-1] == str(ROOT / "var" / "elsewhere")


def test_manage_check_fails_on_a_bad_value_too():
    proc = manage_process("check", EMBEDDING_PROVIDER="bogus")
    assert proc.returncode != 0
    assert "EMBEDDING_PROVIDER='bogus' is not one of openai, local, hash" in proc.stderr


def test_https_makes_cookies_secure_redirects_and_trusts_the_proxy_scheme_only_with_a_proxy():
    plain = loaded()
    assert plain["secure_cookies"] == [False, False] and not plain["ssl_redirect"]
    assert plain["proxy_ssl_header"] is None and plain["hsts"] == 0
    direct = loaded(DJANGO_HTTPS="1", DJANGO_HSTS_SECONDS="3600")
    assert direct["secure_cookies"] == [True, True] and direct["ssl_redirect"]
    assert direct["proxy_ssl_header"] is None  # no proxy: a client could send the header
    assert direct["hsts"] == 3600
    proxied = loaded(DJANGO_HTTPS="1", TRUSTED_PROXY_COUNT="1")
    assert proxied["proxy_ssl_header"] == ["HTTP_X_FORWARDED_PROTO", "https"]


def _deploy_warnings(**env: str) -> set[str]:
    proc = manage_process(
        "check",
        "--deploy",
        DJANGO_SECRET_KEY="a-long-random-production-key-" + "x7Qz9" * 10,  # no W009
        EMBEDDING_PROVIDER="hash",
        **env,
    )
    # Every warning check --deploy prints, of any app (drf_spectacular's enum names too).
    return set(re.findall(r"\(([a-z_]+\.W\d+)\)", proc.stdout + proc.stderr))


def test_check_deploy_is_clean_on_https_but_for_the_hsts_commitments():
    http_only = {"security.W004", "security.W008", "security.W012", "security.W016"}
    assert http_only <= _deploy_warnings()
    on_https = _deploy_warnings(
        DJANGO_HTTPS="1", TRUSTED_PROXY_COUNT="1", DJANGO_HSTS_SECONDS="31536000"
    )
    # W005 and W021: HSTS for every subdomain and the browsers' preload list, the site's call.
    assert on_https <= {"security.W005", "security.W021"}, on_https


def test_a_metrics_directory_that_is_not_there_yet_is_made(tmp_path):
    wanted = tmp_path / "metrics" / "web"
    assert loaded(PROMETHEUS_MULTIPROC_DIR=str(wanted))["debug"] is False
    assert wanted.is_dir()


def test_debug_mode_starts_without_secrets_using_dev_only_values():
    values = loaded(DJANGO_DEBUG="1", DJANGO_SECRET_KEY=None, AGENT_STATE_SECRET=None)
    assert values["debug"] is True
    assert str(values["secret"]).startswith("dev-only")
    assert str(values["agent_secret"]).startswith("dev-only")


def test_production_values_are_taken_from_the_environment():
    values = loaded(DJANGO_ALLOWED_HOSTS="legacymind.example.org,10.0.0.5")
    assert values["debug"] is False
    assert values["secret"] == "s3cret-for-tests"
    assert values["agent_secret"] == "agent-s3cret-for-tests"
    assert values["allowed_hosts"] == ["legacymind.example.org", "10.0.0.5"]


def test_embedding_provider_defaults_to_local_and_to_openai_with_a_key():
    assert loaded()["embedding_provider"] == "local"
    assert loaded(OPENAI_API_KEY="sk-test")["embedding_provider"] == "openai"


def test_without_redis_url_tasks_run_eagerly_and_the_cache_is_the_database():
    values = loaded(REDIS_URL=None)
    assert values["eager"] is True
    assert values["broker"] == "memory://localhost/"  # a host: kombu warned without one
    assert values["cache"] == "django.core.cache.backends.db.DatabaseCache"
    assert values["cache_location"] == "legacymind_cache"


def test_with_redis_url_celery_and_the_cache_use_redis():
    url = "redis://127.0.0.1:6390/3"
    values = loaded(REDIS_URL=url)
    assert values["eager"] is False
    assert values["broker"] == url
    assert values["backend"] == url
    assert values["cache"] == "django.core.cache.backends.redis.RedisCache"
    assert values["cache_location"] == url


ALIASED = """
import json, django
django.setup()
from django.conf import settings as s
print(json.dumps([s.THINK_INJECT_T1, s.KG_CANDIDATES, s.INNER_VOICE_TIMEOUT, s.THINK_TAG_WHITELIST]))
"""


def test_the_originals_surr_names_are_read_when_the_new_names_are_not_set():
    proc = settings_process(
        ALIASED,
        SURR_INJECT_T1="0.7",
        SURR_KG_CANDIDATES="250",
        SURR_INNER_VOICE_TIMEOUT="120",
        SURR_THINK_TAG_WHITELIST="plan,Ideas",
    )
    assert proc.returncode == 0, proc.stderr[-1500:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [0.7, 250, 120, ["plan", "ideas"]]


def test_the_new_name_wins_when_both_say_the_same_and_differing_values_stop_start_up():
    same = settings_process(ALIASED, THINK_INJECT_T1="0.7", SURR_INJECT_T1="0.7")
    assert same.returncode == 0, same.stderr[-1500:]
    assert json.loads(same.stdout.strip().splitlines()[-1])[0] == 0.7
    proc = settings_process(ALIASED, THINK_INJECT_T1="0.7", SURR_INJECT_T1="0.5")
    assert proc.returncode != 0
    last_line = proc.stderr.strip().splitlines()[-1]
    assert "THINK_INJECT_T1" in last_line and "SURR_INJECT_T1" in last_line, last_line


def test_a_bad_value_under_an_old_name_stops_start_up_too():
    proc = settings_process(ALIASED, SURR_INJECT_T1="high")
    assert proc.returncode != 0
    assert "ImproperlyConfigured" in proc.stderr
