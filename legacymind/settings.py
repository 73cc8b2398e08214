"""Django settings. Every value comes from the environment (see ``.env.example``)."""

from __future__ import annotations

from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from legacymind.api.patterns import JSON_VALUE_SCHEMA
from legacymind.conf.env import env_bool as _flag
from legacymind.conf.env import env_choice as _choice
from legacymind.conf.env import env_int as _integer
from legacymind.conf.env import env_rate as _rate
from legacymind.conf.env import env_secret as _secret
from legacymind.conf.pg import env_pg_size_at_least as _pg_size_at_least

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)


DEBUG = _flag("DJANGO_DEBUG", False)
SECRET_KEY = _secret("DJANGO_SECRET_KEY", dev_value="dev-only-insecure-key")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "legacymind",
    "thoughts",
    "kg",
    "innervoice",
    "agent",
    "mcpserver",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Serves collected static files (admin, Swagger UI) under gunicorn, where Django does not.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "legacymind.web.middleware.RefuseNulInQuery",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, so that it sees a view's exception first (DRF views answer their own).
    "legacymind.web.middleware.OutageUnavailable",
]

ROOT_URLCONF = "legacymind.urls"
WSGI_APPLICATION = "legacymind.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database: DATABASE_URL, or the embedded server (Postgres 16 + pgvector 0.8) ------------
# Relative to the project (BASE_DIR), not to wherever a command runs: from another directory a
# relative path started a second, empty database there.
PGDATA_DIR = BASE_DIR / env.str("LEGACYMIND_PGDATA", default=str(BASE_DIR / "var" / "pgdata"))
# HNSW builds are ~5x faster with 1GB than with the 64MB default (100k x 384: 56 s vs 294 s).
# Passed to every connection: a bad size would fail each connection with Postgres' message.
MAINTENANCE_WORK_MEM = _pg_size_at_least("PG_MAINTENANCE_WORK_MEM", "1GB", minimum="1MB")
# HNSW search breadth per query: pgvector's default 40 gave recall@10 0.94 at 100k clustered
# vectors, 100 gave 0.985 for ~1 ms more, 160 cost the same as 100 (docs/benchmarks.md,
# "Retrieval"). 160 is what think's injection asks for (THINK_INJECT_EF_SEARCH): with the two
# equal, an injection search needs no SET and no transaction of its own (3 round trips).
HNSW_EF_SEARCH = _integer("HNSW_EF_SEARCH", 160, low=1, high=1000)
# The embedded server's buffer cache (a DATABASE_URL server keeps its own configuration).
# Postgres' 128MB default is smaller than one HNSW index at 100k x 384 (195MB): a think's search
# then reads ~1,300 of its ~4,400 pages from the OS cache instead of shared memory.
# Postgres' minimum is 16 buffers of 8kB: below it the embedded server would not start.
PG_SHARED_BUFFERS = _pg_size_at_least("PG_SHARED_BUFFERS", "512MB", minimum="128kB")
_PG_SCHEMES = ("postgres", "postgresql", "pgsql")
if _database_url := env.str("DATABASE_URL", default=""):
    # Checked before django-environ parses it: for a URL without a scheme it warns with the
    # whole parsed result, password included, on stderr; an unknown one ("postgress") got past
    # a substring check of the engine and failed later in a long traceback.
    _scheme = _database_url.split("://", 1)[0] if "://" in _database_url else ""
    if _scheme not in _PG_SCHEMES:
        raise ImproperlyConfigured(
            f"DATABASE_URL must be a PostgreSQL URL (postgres://user:password@host:port/name), "
            f"not one with scheme {_scheme or '(none)'!r}"
        )
    try:
        _db = env.db_url("DATABASE_URL")
    except Exception as exc:  # django-environ raises several types for a bad URL
        raise ImproperlyConfigured(f"DATABASE_URL is not a valid database URL: {exc}") from exc
    EMBEDDED_DB = False
else:
    from legacymind.db import embedded as embedded_db

    _db = {**embedded_db.start(PGDATA_DIR, server_settings={"shared_buffers": PG_SHARED_BUFFERS})}
    EMBEDDED_DB = True
_db.setdefault("OPTIONS", {})
# After any ?options= the URL gives (a statement_timeout, say), which it used to replace.
_db["OPTIONS"]["options"] = " ".join(
    part
    for part in (
        _db["OPTIONS"].get("options", ""),
        f"-c maintenance_work_mem={MAINTENANCE_WORK_MEM} -c hnsw.ef_search={HNSW_EF_SEARCH}",
    )
    if part
)
# Persistent connections: opening one costs a few ms (a forked backend), more than many
# requests spend in the database. Health checks drop a connection the server closed.
_db["CONN_MAX_AGE"] = _integer("DB_CONN_MAX_AGE", 60, low=0, high=86400)
_db["CONN_HEALTH_CHECKS"] = True
# Django's PostgreSQL backend whose health check polls the socket instead of sending SELECT 1
# on every request (legacymind/postgres/base.py).
_db["ENGINE"] = "legacymind.db.postgres"
_db["TEST"] = {"NAME": env.str("TEST_DATABASE_NAME", default="test_legacymind")}
DATABASES = {"default": _db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis: Celery broker and cache, or eager tasks and the database cache ------------------
REDIS_URL = env.str("REDIS_URL", default="")


def _check_redis_url(url: str) -> None:
    # redis-py reads "redis://" as localhost:6379/0 and a bad port only when it first
    # connects (/healthz then said "error: ValueError"): refuse both here, naming the variable.
    # The message never repeats the URL, which may hold a password.
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise ImproperlyConfigured("REDIS_URL must start with redis://, rediss:// or unix://")
    if parts.scheme == "unix":
        if not parts.path:
            raise ImproperlyConfigured("REDIS_URL must name a socket, e.g. unix:///run/redis.sock")
        db = parse_qs(parts.query).get("db", [""])[0]
    else:
        if not parts.hostname:
            raise ImproperlyConfigured("REDIS_URL must name a host, e.g. redis://redis:6379/0")
        try:
            port = parts.port  # ValueError: not a number, or over 65535
        except ValueError:
            port = 0
        if port == 0 or parts.netloc.endswith(":"):
            raise ImproperlyConfigured("REDIS_URL has a bad port: a whole number from 1 to 65535")
        db = parts.path.strip("/") or parse_qs(parts.query).get("db", [""])[0]
    if db and not db.isdigit():
        raise ImproperlyConfigured("REDIS_URL has a bad database number: a whole number, e.g. /0")


if REDIS_URL:
    _check_redis_url(REDIS_URL)
    # Redis-py waits forever on a host that drops packets: a request then hangs on the cache.
    _redis_timeouts = {"socket_connect_timeout": 2, "socket_timeout": 2}
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": _redis_timeouts,
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    # Only the worker-path checks (legacymind.ping, db_ping) read results; every other task is
    # fire-and-forget (CELERY_TASK_IGNORE_RESULT below), so publishing one never touches this.
    CELERY_RESULT_BACKEND = REDIS_URL
    CELERY_TASK_ALWAYS_EAGER = False
else:
    # The database cache is shared between processes, which idempotency and rate checks need.
    # Django's default MAX_ENTRIES (300) is far too few for that: past it, a set culls a third of
    # the keys in cache_key order, live or not, dropping the agent's revision claims (24 h) and
    # idempotent replays and resetting rate counters and login guards after a few hundred
    # turns. A cull deletes expired rows first, so live keys go only when more than this many
    # are live. But expired rows are deleted only by a cull, so the table fills up to the bound
    # and every set counts it: SELECT COUNT(*) took 0.45 ms at 10,000 rows and 7 ms at 100,000
    # here, paid by every throttled request and agent turn. 10,000 live keys is plenty for the
    # small site that runs without Redis; one with more (turns a day, users a minute) sets
    # REDIS_URL.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "legacymind_cache",
            "OPTIONS": {"MAX_ENTRIES": 10_000},
        }
    }
    # Eager tasks never reach the broker, but Celery still opens a producer for them; a URL
    # without a host made kombu warn "Reverting to default 'localhost'" on every first task.
    CELERY_BROKER_URL = "memory://localhost/"
    CELERY_RESULT_BACKEND = "cache+memory://"
    CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
# No caller waits for a task's result: storing one cost a Redis write per task, and with Redis
# down the result backend retried 20 x 1 s inside every publish (a 20 s request).
CELERY_TASK_IGNORE_RESULT = True
# A publish runs after the request's commit: with the broker down it must fail within about a
# second (legacymind.celery.publish_on_commit logs it), not hold a web thread.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {
    "retry_policy": {"max_retries": 2, "interval_start": 0, "interval_step": 0.5}
}
CELERY_TASK_ACKS_LATE = True
# Celery's Django fixup closes the database connection before and after every task unless this
# is set, whatever CONN_MAX_AGE says: a new connection was ~8 ms of the ~12 an access bump took.
# With it set, legacymind/celery.py applies CONN_MAX_AGE around each task instead, as Django
# does around each request (so DB_CONN_MAX_AGE=0 still means a connection per task).
CELERY_DB_REUSE_MAX = 1_000_000
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# --- Embeddings (legacymind/conf/embeddings.py) ---------------------------------------------
from legacymind.conf.embeddings import *  # noqa: E402,F403

# --- API ----------------------------------------------------------------------------------
# Reverse proxies in front of the app that append the client's address to X-Forwarded-For
# (nginx, a load balancer): the client is the entry that many places from the end. 0: the header
# is ignored and REMOTE_ADDR is the client, so nobody picks their own address for the sign-in
# guard or the anonymous throttle by sending the header. One rule for both: DRF's NUM_PROXIES.
TRUSTED_PROXY_COUNT = _integer("TRUSTED_PROXY_COUNT", 0, low=0, high=10)

# --- HTTPS ----------------------------------------------------------------------------------
# A site served over HTTPS: cookies only over TLS, plain-HTTP requests redirected, and (with
# DJANGO_HSTS_SECONDS) browsers told to stay on HTTPS; `manage.py check --deploy` is then clean
# but for HSTS's subdomain and preload options, which commit more than this app. Behind a proxy
# that terminates TLS (TRUSTED_PROXY_COUNT > 0) the scheme is the proxy's X-Forwarded-Proto:
# it must set that header itself. /healthz and /metrics stay plain HTTP: the container's health
# check and Prometheus call them from inside the network.
HTTPS = _flag("DJANGO_HTTPS", False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = SECURE_SSL_REDIRECT = HTTPS
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
if HTTPS and TRUSTED_PROXY_COUNT:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = _integer("DJANGO_HSTS_SECONDS", 0, low=0, high=2 * 365 * 86400)
if SECURE_HSTS_SECONDS and not HTTPS:
    # Sent over plain HTTP the header is ignored; set alone it is a sign of a half-done setup.
    raise ImproperlyConfigured("DJANGO_HSTS_SECONDS needs DJANGO_HTTPS=1 (the site on HTTPS)")
REST_FRAMEWORK = {
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # DRF's renderers, with the project's subclass (legacymind/api/renderers.py) for the
    # browsable API's list pages. Bodies are JSON only: a form cannot say null, a number or a
    # nested object, so the same field read from a form meant something else (any other
    # content type is a 415, as the schema says).
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "legacymind.api.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_PARSER_CLASSES": ["legacymind.api.parsers.JSONParser"],
    "DEFAULT_PAGINATION_CLASS": "legacymind.api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "legacymind.api.schema.AutoSchema",
    "EXCEPTION_HANDLER": "legacymind.errors.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": [
        "legacymind.api.throttles.UserThrottle",
        "legacymind.api.throttles.AnonThrottle",
    ],
}
# Request rates (N/second|minute|hour|day) per user and per anonymous address; unset: no limit.
API_THROTTLE_USER = _rate("API_THROTTLE_USER")
API_THROTTLE_ANON = _rate("API_THROTTLE_ANON")
SPECTACULAR_SETTINGS = {
    "TITLE": "LegacyMind API",
    "DESCRIPTION": "Persistent, searchable memory of thinking: thoughts, knowledge graph, "
    "inner voice and the journaling agent.",
    "VERSION": "1.0.0",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # The JSON value a JSON object field takes (legacymind/api/fields.py), recursive.
    "APPEND_COMPONENTS": {"schemas": {"JSONValue": JSON_VALUE_SCHEMA}},
    # One name per choice set that several fields share (otherwise suffixes like B1bEnum).
    "ENUM_NAME_OVERRIDES": {
        "AgentExitReasonEnum": ["threshold", "epsilon", "budget", "guardrail"],
        "ReflectionFrameworkEnum": [
            "buddhism",
            "stoicism",
            "existentialism",
            "neoadlerianism",
            "other",
        ],
        "MemoryKindEnum": ["entity", "observation"],
        # Fields named origin and status elsewhere hold other choices (manage.py check
        # --deploy printed drf_spectacular.W001 for each).
        "ThoughtOriginEnum": "thoughts.models.Thought.Origin",
        "ThreadStatusEnum": "innervoice.models.DialogueThread.Status",
    },
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
# Failed sign-ins are counted per (username, address); at the limit that pair is refused for the
# rest of the window (legacymind/login_guard.py). 0 turns the guard off.
LOGIN_FAILURE_LIMIT = _integer("LOGIN_FAILURE_LIMIT", 10, low=0, high=1_000_000)
LOGIN_FAILURE_WINDOW = _integer("LOGIN_FAILURE_WINDOW", 900, low=1, high=86_400 * 30)
AUTHENTICATION_BACKENDS = ["legacymind.web.login_guard.GuardedModelBackend"]
LOGIN_REDIRECT_URL = "/journal/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"

LOG_LEVEL = _choice("LOG_LEVEL", "INFO", ("debug", "info", "warning", "error")).upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "filters": {"as_warning": {"()": "legacymind.conf.logs.AsWarningWithoutTraceback"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        **{
            name: {"handlers": ["console"], "level": LOG_LEVEL, "propagate": False}
            for name in ("legacymind", "thoughts", "kg", "innervoice", "agent")
        },
        # Replaces Django's default "django" logger, whose own console handler (DEBUG only)
        # printed every line a second time through the root's. "django.server" (runserver's
        # request lines) keeps Django's handler.
        "django": {
            "handlers": ["console"],
            "level": "INFO" if DEBUG else "WARNING",
            "propagate": False,
        },
        "django.security.DisallowedHost": {"filters": ["as_warning"]},
        # A URL filter the admin refuses (legacymind/admin_lookups.py) answers 400.
        "django.security.DisallowedModelAdminLookup": {"filters": ["as_warning"]},
    },
}

# --- Per-app settings (each app owns its module under legacymind/conf/) ----------------------
from legacymind.conf.agent import *  # noqa: E402,F403
from legacymind.conf.innervoice import *  # noqa: E402,F403
from legacymind.conf.kg import *  # noqa: E402,F403
from legacymind.conf.thoughts import *  # noqa: E402,F403
