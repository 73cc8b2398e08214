"""Paired think benchmark: the CPU one ``POST /api/v1/think`` costs under gunicorn, for two
versions served side by side. The think benchmark's throughput moves by a quarter within
minutes on these VMs with the same code (docs/benchmarks.md), more than most changes gain; here
both versions run at once and take one request each in turn (the order alternating), so
whatever slows the machine slows both alike, and only their difference is read.

A side is a checkout (``--a-code``/``--b-code``, default this one) served against a database
server (``--a-host``/``--b-host``: the server's Unix socket directory, default the bench's own
server), each with its own gunicorn (one process, one thread) and its own connection. For each
round it prints the CPU per request of each side's gunicorn and of its Postgres backend, then
the totals and the ratio B/A.

    python bench/think_pair.py --a-code /tmp/old-checkout [--rounds 4] [--requests 400]
    python bench/think_pair.py --b-host /tmp/pg-with-huge-pages

It uses the database that ``bench/think.py`` leaves (``bench_think``: run that first; 100,000
entities with ``--sizes 100000``), at injection scale 3 with the same query texts, and leaves
the stored thoughts there. The access bumps go to a Redis list that no worker takes: the same
work for both sides, and nothing to wait for.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.support.redis_server import free_port, redis_url

_redis = contextlib.ExitStack()
# Database 12: not the think benchmark's (13) nor the tests' (15).
os.environ["REDIS_URL"] = re.sub(r"/\d+$", "/12", _redis.enter_context(redis_url()))
os.environ.setdefault("BENCH_DATABASE_NAME", "bench_think")
os.environ.setdefault("EMBEDDING_PROVIDER", "hash")
os.environ.setdefault("KG_AUTO_EXTRACT", "0")
os.environ.setdefault("LOG_LEVEL", "warning")

import numpy as np  # noqa: E402
import psutil  # noqa: E402
import psycopg  # noqa: E402
from _common import ROOT, use_bench_database  # noqa: E402
from _think_data import HINT, query_texts  # noqa: E402
from _think_load import bench_token, child_env, cpu_seconds  # noqa: E402
from django.db import connection  # noqa: E402

SIDES = ("A", "B")


def serve(code: Path, host: str, side: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {
        **child_env(host=host, application_name=f"think_pair_{side}"),
        # One connection for the whole run: the CPU read is that backend's, and a connection
        # renewed after the bench's usual 60 s was a new process mid-round (a negative figure).
        "DB_CONN_MAX_AGE": "86400",
        "PYTHONPATH": str(code),
        "WEB_ACCESS_LOG": "",
        "WEB_CONCURRENCY": "1",
        "WEB_THREADS": "1",
    }
    gunicorn = str(Path(sys.executable).parent / "gunicorn")
    server = subprocess.Popen(
        [gunicorn, "--bind", f"127.0.0.1:{port}", "--log-level", "warning"], cwd=code, env=env
    )
    return server, port


def backend_pid(host: str, side: str) -> int:
    with psycopg.connect(host=host, user=connection.settings_dict["USER"],
                         dbname=connection.settings_dict["NAME"]) as probe:  # fmt: skip
        row = probe.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s",
            [f"think_pair_{side}"],
        ).fetchone()
    if row is None:
        raise SystemExit(f"side {side}: its gunicorn holds no connection to {host}")
    return int(row[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a-code", type=Path, default=ROOT)
    parser.add_argument("--b-code", type=Path, default=ROOT)
    parser.add_argument("--a-host", default="")
    parser.add_argument("--b-host", default="")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--requests", type=int, default=400, help="per side and round")
    args = parser.parse_args()
    use_bench_database()
    own_host = str(connection.settings_dict["HOST"] or "")
    code = {"A": args.a_code.resolve(), "B": args.b_code.resolve()}
    host = {"A": args.a_host or own_host, "B": args.b_host or own_host}
    token = bench_token("bench-think")
    texts = query_texts(np.random.default_rng(7), 200)
    servers: dict[str, subprocess.Popen[bytes]] = {}
    clients: dict[str, http.client.HTTPConnection] = {}
    try:
        for side in SIDES:
            servers[side], port = serve(code[side], host[side], side)
            clients[side] = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        reconnects = dict.fromkeys(SIDES, 0)
        headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}

        def think(side: str, text: str) -> None:
            body = {"content": text, "hint": HINT, "injection_scale": 3}
            for _attempt in range(100):  # the first request waits for gunicorn to listen
                try:
                    clients[side].request("POST", "/api/v1/think", json.dumps(body), headers)
                    answer = clients[side].getresponse()
                    answer.read()
                    break
                except ConnectionRefusedError:
                    clients[side].close()
                    time.sleep(0.1)
                except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
                    # gunicorn 27 closes an idle keep-alive connection without saying so.
                    clients[side].close()
                    reconnects[side] += 1
            else:
                raise SystemExit(f"side {side}: no answer after 100 attempts")
            if answer.status != 201:
                raise SystemExit(f"side {side}: think answered {answer.status}")

        for i in range(40):  # warm both: imports, the ORM, the index pages
            for side in SIDES:
                think(side, texts[i % len(texts)])
        masters = {s: psutil.Process(servers[s].pid) for s in SIDES}
        web = {s: [masters[s], *masters[s].children()] for s in SIDES}
        db = {s: [psutil.Process(backend_pid(host[s], s))] for s in SIDES}
        print(f"A: {code['A']} on {host['A']}\nB: {code['B']} on {host['B']}")
        totals: dict[str, list[float]] = {s: [0.0, 0.0] for s in SIDES}
        for rnd in range(args.rounds):
            before = {s: (cpu_seconds(web[s]), cpu_seconds(db[s])) for s in SIDES}
            for i in range(args.requests):
                for side in SIDES if i % 2 == 0 else SIDES[::-1]:
                    think(side, texts[i % len(texts)])
            line = []
            for s in SIDES:
                w = cpu_seconds(web[s]) - before[s][0]
                d = cpu_seconds(db[s]) - before[s][1]
                totals[s][0] += w
                totals[s][1] += d
                n = args.requests / 1000
                line.append(f"{s} web {w / n:.2f} db {d / n:.2f} all {(w + d) / n:.2f}")
            print(f"round {rnd + 1}, CPU ms per request: " + "; ".join(line), flush=True)
        n = args.requests * args.rounds / 1000
        per: dict[str, Any] = {s: [t / n for t in totals[s]] for s in SIDES}
        for s in SIDES:
            print(f"{s}: web {per[s][0]:.3f} ms, database {per[s][1]:.3f} ms, "
                  f"all {sum(per[s]):.3f} ms of CPU per request")  # fmt: skip
        print(f"reconnections: {reconnects}")
        print(f"B/A: web {per['B'][0] / per['A'][0]:.3f}, database "
              f"{per['B'][1] / per['A'][1]:.3f}, all {sum(per['B']) / sum(per['A']):.3f}")  # fmt: skip
    finally:
        for server in servers.values():
            server.terminate()
            server.wait(30)
        _redis.close()


if __name__ == "__main__":
    main()
