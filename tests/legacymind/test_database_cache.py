"""The database cache (no REDIS_URL) keeps what the guards and the agent put in it: Django's
default of 300 entries culled a third of the keys, live ones included, past that many."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.utils.module_loading import import_string

from tests.support.settings_process import settings_process

pytestmark = pytest.mark.django_db

PRINT_CACHE = """
import json, django
django.setup()
from django.conf import settings as s
print(json.dumps(s.CACHES["default"]))
"""


def _configured_database_cache():
    """The cache exactly as the settings configure it without REDIS_URL (loaded in a fresh
    process, so a REDIS_URL in this one does not matter), on the test database."""
    proc = settings_process(PRINT_CACHE, REDIS_URL=None)
    assert proc.returncode == 0, proc.stderr[-2000:]
    params = json.loads(proc.stdout.strip().splitlines()[-1])
    backend = params.pop("BACKEND")
    assert backend == "django.core.cache.backends.db.DatabaseCache"
    call_command("createcachetable", verbosity=0)
    return import_string(backend)(params.pop("LOCATION"), params)


def test_the_database_cache_keeps_a_thousand_live_entries():
    cache = _configured_database_cache()
    cache.clear()
    entries = {f"agent:user:{n}:claim": "done" for n in range(1000)}
    try:
        cache.set_many(entries, 600)
        assert len(cache.get_many(list(entries))) == 1000
    finally:
        cache.clear()
