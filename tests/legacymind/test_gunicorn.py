"""gunicorn.conf.py: threaded workers that keep serving while a request waits on a remote API,
sized from the environment, refusing bad values by name; /metrics counts every worker process."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib import request as urlrequest
from urllib.error import HTTPError

import pytest
from django.contrib.auth.models import User
from prometheus_client.parser import text_string_to_metric_families
from rest_framework.authtoken.models import Token

from legacymind.providers.embeddings import HashEmbedder
from tests.agent.conftest import BOUNDARIES_ENTRY as ENTRY
from tests.support.celery_worker import worker_database_url
from tests.support.openai_server import OpenAIStub
from tests.support.redis_server import free_port
from tests.support.serving import wait_healthy
from tests.support.settings_process import NO_DB
from thoughts.models import Thought

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = str(Path(sys.executable).parent / "gunicorn")


def gunicorn(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """gunicorn run from the checkout (so it reads gunicorn.conf.py); the app it loads to check
    the config gets settings that never connect anywhere."""
    clean = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
        "DJANGO_SECRET_KEY": "x",
        "AGENT_STATE_SECRET": "y",
        "DATABASE_URL": NO_DB,
        "EMBEDDING_PROVIDER": "hash",
        **env,
    }
    return subprocess.run(
        [GUNICORN, *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60
    )


def printed_config(*args: str, **env: str) -> dict[str, str]:
    out = gunicorn("--print-config", *args, **env)
    assert out.returncode == 0, out.stderr
    return {
        key.strip(): value.strip()
        for key, _, value in (line.partition("=") for line in out.stdout.splitlines())
    }


def test_the_config_runs_threaded_workers_sized_from_the_environment():
    defaults = printed_config()
    assert defaults["worker_class"] == "gthread"
    assert (defaults["workers"], defaults["threads"], defaults["timeout"]) == ("3", "8", "120")
    assert defaults["wsgi_app"] == "legacymind.wsgi:application"
    assert defaults["bind"] == "['127.0.0.1:8000']"  # the container passes --bind 0.0.0.0:8000
    assert defaults["accesslog"] == "-"
    sized = printed_config(WEB_CONCURRENCY="2", WEB_THREADS="4", WEB_TIMEOUT="30")
    assert (sized["workers"], sized["threads"], sized["timeout"]) == ("2", "4", "30")
    assert printed_config(WEB_ACCESS_LOG="")["accesslog"] == "None"


def test_the_config_reads_the_env_file_beside_it_and_the_environment_wins(tmp_path):
    # A copy of the config in a directory of its own, with its own .env (never the checkout's).
    shutil.copy(ROOT / "gunicorn.conf.py", tmp_path / "gunicorn.conf.py")
    (tmp_path / ".env").write_text("WEB_BIND=127.0.0.1:8106\nWEB_CONCURRENCY=1\nWEB_THREADS=2\n")
    config = str(tmp_path / "gunicorn.conf.py")
    read = printed_config("-c", config)
    assert (read["bind"], read["workers"], read["threads"]) == ("['127.0.0.1:8106']", "1", "2")
    assert printed_config("-c", config, WEB_THREADS="5")["threads"] == "5"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("WEB_THREADS", "eight", "WEB_THREADS must be a whole number, got 'eight'"),
        ("WEB_THREADS", "0", "WEB_THREADS must be at least 1, got 0"),
        ("WEB_CONCURRENCY", "0", "WEB_CONCURRENCY must be at least 1, got 0"),
        ("WEB_TIMEOUT", "-1", "WEB_TIMEOUT must be at least 1, got -1"),
        ("WEB_TIMEOUT", "2m", "WEB_TIMEOUT must be a whole number, got '2m'"),
    ],
)
def test_a_bad_value_stops_gunicorn_naming_the_variable(name, value, message):
    out = gunicorn("--check-config", **{name: value})
    assert out.returncode != 0
    assert out.stderr.strip() == message  # the one line, no traceback


@contextmanager
def served(stub: OpenAIStub, **env: str) -> Iterator[str]:
    """gunicorn with the repo's config on the test database, embedding through ``stub``."""
    port = free_port()
    server = subprocess.Popen(
        [GUNICORN, "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        cwd=ROOT,
        env={
            "PATH": os.environ.get("PATH", ""),
            "HOME": os.environ.get("HOME", "/tmp"),
            "DATABASE_URL": worker_database_url(),
            "DJANGO_SECRET_KEY": "x",
            "AGENT_STATE_SECRET": "y",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
            "EMBEDDING_PROVIDER": "openai",
            "OPENAI_API_KEY": "sk-test",
            "OPENAI_BASE_URL": stub.base_url,
            "EMBEDDING_MODEL": "text-embedding-3-small",
            "EMBEDDING_DIM": "384",
            "EMBEDDING_MAX_RETRIES": "0",
            "KG_AUTO_EXTRACT": "0",
            "WEB_ACCESS_LOG": "",
            **env,
        },
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, server, timeout=60, what="gunicorn")
        yield url
    finally:
        server.terminate()  # before the test database is flushed: it holds connections to it
        server.wait(30)


@pytest.mark.django_db(transaction=True)
def test_one_worker_process_serves_thinks_while_others_wait_on_the_embeddings_api(user):
    # Every embeddings call waits until four are in flight at once: a worker that served one
    # request at a time (gunicorn's sync workers, what the app ran before) would never get
    # there, its calls would fail after the timeout and the thinks would be 503s.
    in_flight = threading.Barrier(4, timeout=20)

    def embed(texts: list[str]) -> list[list[float]]:
        in_flight.wait()
        return HashEmbedder(dim=384).embed(texts).tolist()

    stub = OpenAIStub().start()
    stub.embed_fn = embed
    token = Token.objects.create(user=user).key
    answers: list[tuple[int, dict]] = []

    def think(i: int) -> None:
        req = urlrequest.Request(
            f"{url}/api/v1/think",
            data=json.dumps({"content": f"thought number {i} about gunicorn"}).encode(),
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        )
        try:
            with urlrequest.urlopen(req, timeout=60) as r:
                answers.append((r.status, json.loads(r.read())))
        except HTTPError as exc:  # a 503 when the embeddings call gave up
            answers.append((exc.code, {}))

    try:
        with served(stub, WEB_CONCURRENCY="1", WEB_THREADS="4") as url:
            clients = [threading.Thread(target=think, args=(i,)) for i in range(4)]
            for c in clients:
                c.start()
            for c in clients:
                c.join(60)
    finally:
        stub.stop()
    assert sorted(status for status, _ in answers) == [201] * 4
    assert not in_flight.broken
    stored = Thought.objects.filter(owner=user)
    assert stored.count() == 4
    assert {t.embedding_model for t in stored} == {"text-embedding-3-small"}
    assert {str(t.id) for t in stored} == {
        body["delegated_result"]["thought_id"].removeprefix("thoughts:") for _, body in answers
    }


@contextmanager
def _hash_stub() -> Iterator[OpenAIStub]:
    """The embeddings API for agent turns, answering with the hash embedder's vectors."""
    stub = OpenAIStub().start()
    stub.embed_fn = lambda texts: HashEmbedder(dim=384).embed(texts).tolist()
    try:
        yield stub
    finally:
        stub.stop()


def _post(url: str, path: str, token: str, body: dict) -> dict:
    req = urlrequest.Request(
        f"{url}{path}",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    try:
        with urlrequest.urlopen(req, timeout=60) as r:
            return json.loads(r.read())
    except HTTPError as exc:
        pytest.fail(f"{path}: {exc.code} {exc.read().decode()[:500]}")


def _staff_token() -> str:
    """The API token of a staff user, as Prometheus scrapes with."""
    scraper = User.objects.create_user("scraper", is_staff=True)
    return str(Token.objects.create(user=scraper).key)


def _scrape(url: str, token: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    req = urlrequest.Request(f"{url}/metrics", headers={"Authorization": f"Token {token}"})
    text = urlrequest.urlopen(req, timeout=30).read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _sum(samples: dict, name: str, **labels: str) -> float:
    return sum(
        v for (n, ls), v in samples.items() if n == name and labels.items() <= dict(ls).items()
    )


@pytest.mark.django_db(transaction=True)
def test_metrics_add_up_the_turns_of_every_worker_process(user, tmp_path):
    # Two single-threaded processes and six clients at once, so both processes serve turns;
    # each scrape reaches one of them and must still count every turn.
    token = Token.objects.create(user=user).key
    staff = _staff_token()
    actions: list[str] = []

    def turns(n: int) -> None:
        for _ in range(n):
            body = _post(
                url, "/v3/agent/act", token, {"mode": "init", "journal_entry": {"text": ENTRY}}
            )
            actions.append(body["action"]["type"])

    env = {"WEB_CONCURRENCY": "2", "WEB_THREADS": "1", "TMPDIR": str(tmp_path)}
    with _hash_stub() as stub, served(stub, **env) as url:
        clients = [threading.Thread(target=turns, args=(5,)) for _ in range(6)]
        for c in clients:
            c.start()
        for c in clients:
            c.join(120)
        (metrics_dir,) = tmp_path.glob("legacymind-metrics-*")
        serving = {p.stem.split("_")[-1] for p in metrics_dir.glob("counter_*.db")}
        scrapes = [_scrape(url, staff) for _ in range(6)]
    assert len(actions) == 30
    assert len(serving) == 2, "both worker processes served turns"
    for samples in scrapes:
        assert _sum(samples, "agent_turns_total") == 30
        assert _sum(samples, "agent_turns_total", mode="init") == 30
        count = _sum(samples, "agent_action_latency_ms_count")
        assert count == 30
        mean = _sum(samples, "agent_action_latency_ms_sum") / count
        assert samples[("avg_action_latency_ms", ())] == pytest.approx(mean)
        assert samples[("askuser_rate", ())] == pytest.approx(actions.count("AskUser") / 30)
    assert not metrics_dir.exists(), "the directory gunicorn made is gone when it stops"


@pytest.mark.django_db(transaction=True)
def test_a_given_metrics_directory_starts_without_an_earlier_runs_samples(user, tmp_path):
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    (metrics_dir / "counter_1.db").write_bytes(b"samples of a run that has ended")
    token = Token.objects.create(user=user).key
    staff = _staff_token()
    env = {"WEB_CONCURRENCY": "1", "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir)}
    with _hash_stub() as stub, served(stub, **env) as url:
        _post(url, "/v3/agent/act", token, {"mode": "init", "journal_entry": {"text": ENTRY}})
        samples = _scrape(url, staff)
    assert _sum(samples, "agent_turns_total") == 1
    assert not (metrics_dir / "counter_1.db").exists()
    assert list(metrics_dir.glob("counter_*.db")), "the given directory is kept"


def _raw(url: str, path: str, **headers: str) -> http.client.HTTPResponse:
    """One GET that does not follow redirects."""
    conn = http.client.HTTPConnection(url.removeprefix("http://"), timeout=30)
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response


@pytest.mark.django_db(transaction=True)
def test_on_https_plain_requests_are_redirected_and_the_proxy_scheme_is_trusted():
    env = {"DJANGO_HTTPS": "1", "TRUSTED_PROXY_COUNT": "1", "DJANGO_HSTS_SECONDS": "3600"}
    with _hash_stub() as stub, served(stub, WEB_CONCURRENCY="1", **env) as url:
        plain = _raw(url, "/accounts/login/")
        health, metrics = _raw(url, "/healthz"), _raw(url, "/metrics")
        proxied = _raw(
            url,
            "/accounts/login/",
            **{"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"},
        )
    host = url.removeprefix("http://")
    assert plain.status == 301
    assert plain.headers["Location"] == f"https://{host}/accounts/login/"
    # The health check and Prometheus are not redirected (the metrics then ask for a token).
    assert (health.status, metrics.status) == (200, 401)
    assert proxied.status == 200
    csrf = [c for c in proxied.headers.get_all("Set-Cookie") or [] if c.startswith("csrftoken=")]
    assert csrf and "Secure" in csrf[0]
    assert proxied.headers["Strict-Transport-Security"] == "max-age=3600"


# --- start-up: the embedding model loads before a worker serves --------------------------------
@contextmanager
def booted(log: Path, **env: str) -> Iterator[str]:
    """gunicorn with the repo's config on the test database, one worker process; its log and
    access log go to ``log``. Yields its URL once /healthz answers."""
    port = free_port()
    with log.open("w") as out:
        server = subprocess.Popen(
            [GUNICORN, "--bind", f"127.0.0.1:{port}"],
            cwd=ROOT,
            env={
                "PATH": os.environ.get("PATH", ""),
                "HOME": os.environ.get("HOME", "/tmp"),
                "DATABASE_URL": worker_database_url(),
                "DJANGO_SECRET_KEY": "x",
                "AGENT_STATE_SECRET": "y",
                "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
                "KG_AUTO_EXTRACT": "0",
                "WEB_CONCURRENCY": "1",
                **env,
            },
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, server, timeout=90, what="gunicorn")
            yield url
        finally:
            server.terminate()  # before the test database is flushed: it holds connections
            server.wait(30)


def _lines_with(log: Path, text: str) -> list[int]:
    return [i for i, line in enumerate(log.read_text().splitlines()) if text in line]


@pytest.mark.django_db(transaction=True)
def test_a_worker_loads_the_local_model_before_it_serves_a_request(user, tmp_path):
    # The model takes seconds to load; loaded on the first think, that think paid for it (and
    # timed out behind a proxy). The worker logs the load, and its first request comes after.
    token = Token.objects.create(user=user).key
    log = tmp_path / "gunicorn.log"
    env = {"EMBEDDING_PROVIDER": "local", "HF_HUB_OFFLINE": "1", "WEB_ACCESS_LOG": "-"}
    with booted(log, **env) as url:
        _post(url, "/api/v1/think", token, {"content": "the first thought after a start"})
    loaded = _lines_with(log, "INFO legacymind.embeddings embedding model all-MiniLM-L6-v2 loaded")
    served_requests = _lines_with(log, '"GET /healthz') + _lines_with(log, '"POST /api/v1/think')
    assert len(loaded) == 1, log.read_text()
    assert served_requests and loaded[0] < min(served_requests), log.read_text()
    assert Thought.objects.get(owner=user).embedding_provider == "local"
    assert "Loading weights" not in log.read_text()  # no progress bar in the worker's log


@pytest.mark.django_db(transaction=True)
def test_a_worker_whose_model_cannot_load_says_so_in_one_line_and_serves(user, tmp_path):
    # A broken sentence-transformers install (a module of that name first on the path) stands
    # in for weights that cannot load.
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "sentence_transformers.py").write_text("raise ImportError('broken install')\n")
    token = Token.objects.create(user=user).key
    log = tmp_path / "gunicorn.log"
    with booted(log, EMBEDDING_PROVIDER="local", PYTHONPATH=str(broken)) as url:
        health = urlrequest.urlopen(f"{url}/healthz", timeout=30).status
        think = urlrequest.Request(
            f"{url}/api/v1/think",
            data=json.dumps({"content": "no model to embed this"}).encode(),
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        )
        with pytest.raises(HTTPError) as refused:
            urlrequest.urlopen(think, timeout=60)
    text = log.read_text()
    assert health == 200
    assert refused.value.code == 503
    assert "Traceback" not in text
    (line,) = [text.splitlines()[i] for i in _lines_with(log, "embedding model not loaded")]
    assert line.endswith(
        " WARNING legacymind.embeddings embedding model not loaded at start-up "
        "(EMBEDDING_PROVIDER=local): EmbeddingError: local embeddings are not installed: "
        "broken install; requests that embed will answer 503"
    )


@pytest.mark.django_db(transaction=True)
def test_warming_the_openai_provider_at_start_sends_no_request():
    with _hash_stub() as stub, served(stub, WEB_CONCURRENCY="1"):
        assert stub.requests == []


@pytest.mark.django_db(transaction=True)
def test_the_access_log_keeps_paths_but_never_query_strings_or_referers(user, tmp_path):
    # Search terms travel in query strings (the KG search, the inner voice's history): the
    # access log must not keep them, nor a Referer that carries a search page's address.
    token = Token.objects.create(user=user).key
    log = tmp_path / "gunicorn.log"
    env = {"EMBEDDING_PROVIDER": "hash", "WEB_ACCESS_LOG": "-"}
    with booted(log, **env) as url:
        search = urlrequest.Request(
            f"{url}/api/v1/kg/search/?q=zebra-MARKER-one",
            headers={"Authorization": f"Token {token}"},
        )
        with urlrequest.urlopen(search, timeout=30) as answered:
            assert answered.status == 200
        page = _raw(
            url, "/inner-voice/?q=zebra-MARKER-two", Referer=f"{url}/inner-voice/?q=MARKER-three"
        )
        assert page.status == 302  # to sign in; the log line is what matters
    text = log.read_text()
    assert '"GET /api/v1/kg/search/ HTTP/1.1" 200' in text, text
    assert '"GET /inner-voice/ HTTP/1.1" 302' in text, text
    assert "MARKER" not in text
