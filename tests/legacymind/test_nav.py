"""The pages' navigation: the admin link only for staff (others would land on the admin's
sign-in, which refuses them); no favicon request to 404 on every page."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def home(user=None) -> str:
    client = Client()
    if user is not None:
        client.force_login(user)
    response = client.get("/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_admin_link_is_shown_to_staff_only(user, other_user):
    other_user.is_staff = True
    other_user.save()
    assert 'id="admin-link"' not in home()
    assert 'id="admin-link"' not in home(user)
    assert 'id="admin-link"' in home(other_user)


def test_pages_declare_an_empty_icon_so_browsers_do_not_request_one():
    assert '<link rel="icon" href="data:,">' in home()
