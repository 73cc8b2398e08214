"""Property-based: no input, valid or not, makes the API answer 5xx or what its schema does not say.

schemathesis reads our own OpenAPI schema and generates requests for every operation, both
inputs that match the schema and inputs that break it, against the real application and
database. Every answer must be below 500 (a 503 would need a provider down, which nothing here
arranges). The first run of this found five 500s (tests/kg/test_api_bad_input.py).
Deterministic: the same examples on every run, so a failure is reproducible.
"""

from __future__ import annotations

import json

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

EXAMPLES_PER_OPERATION = 20


def _schema() -> schemathesis.BaseSchema:
    # The schema as /api/schema/ serves it, built without a request or the database.
    document = SchemaGenerator().get_schema(request=None, public=True)
    schema = schemathesis.openapi.from_dict(json.loads(json.dumps(document, default=str)))
    # Requests go to the app in-process, over WSGI (Django's own handler: legacymind.wsgi would
    # also load the embedding model and freeze the collector for the whole test session).
    schema.app = get_wsgi_application()
    # Fuzzing only: the coverage phase's boundary cases are ~5,000 requests, 2 minutes here.
    schema.config.phases.update(phases=["examples", "fuzzing"])
    schema.config.generation.update(
        modes=["positive", "negative"],
        max_examples=EXAMPLES_PER_OPERATION,
        deterministic=True,
        database="none",
    )
    return schema


fuzzed = _schema()


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    # Called as a WSGI app, Django closes the database connection at the end of each request,
    # which would end the test's transaction; Django's own test client disconnects the same.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@fuzzed.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck))
@pytest.mark.django_db
def test_no_request_makes_the_api_fail(case, moderator):
    # A moderator reaches every operation, the moderation writes included.
    token, _ = Token.objects.get_or_create(user=moderator)
    case.call_and_validate(
        headers={"Authorization": f"Token {token.key}"},
        checks=[
            not_a_server_error,
            # The schema tells the truth: every status, content type and body it returns is
            # documented (bodies against their schemas, errors against the envelope).
            status_code_conformance,
            content_type_conformance,
            response_schema_conformance,
        ],
    )
