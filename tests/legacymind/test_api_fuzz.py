"""Property-based: the OpenAPI schema states exactly what the server accepts and answers.

schemathesis reads our own OpenAPI schema and generates requests for every operation, both
inputs that match the schema and inputs that break it, and sends them over HTTP to a running
server (pytest-django's ``live_server``, on the real database). Every check schemathesis has
runs: no 5xx; every status, content type, header and body the server returns is documented;
schema-valid data is accepted (``positive_data_acceptance``) and schema-invalid data refused
(``negative_data_rejection``); a request without its auth, or with a method the path does not
take, is refused. A 503 would need a provider down, which nothing here arranges.
Deterministic: the same examples on every run, so a failure is reproducible.
"""

from __future__ import annotations

import json

import pytest
import schemathesis
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import CHECKS, load_all_checks, max_response_time

EXAMPLES_PER_OPERATION = 20
load_all_checks()
# Every built-in check but the response-time budget (timing on 2 shared cores is noise).
ALL_CHECKS = [check for check in CHECKS.get_all() if check is not max_response_time]


def _schema() -> schemathesis.BaseSchema:
    # The schema as /api/schema/ serves it, built without a request or the database.
    document = SchemaGenerator().get_schema(request=None, public=True)
    schema = schemathesis.openapi.from_dict(json.loads(json.dumps(document, default=str)))
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


@fuzzed.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck))
@pytest.mark.django_db(transaction=True)
def test_the_schema_states_what_the_server_accepts(case, moderator, live_server):
    # A moderator reaches every operation, the moderation writes included.
    token, _ = Token.objects.get_or_create(user=moderator)
    case.call_and_validate(
        base_url=live_server.url,
        headers={"Authorization": f"Token {token.key}"},
        checks=ALL_CHECKS,
        # An ask embeds, synthesises and stores: seconds on 2 shared cores, not a hang.
        timeout=120,
    )
