"""Browser pages (server-rendered): home, and sign in / out for the pages that need a login.
The journaling pages are added by the agent app."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path

from legacymind.web.login_guard import SignInForm


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html")


urlpatterns = [
    path("", home, name="home"),
    # Any user signs in here; the admin's own login admits staff only.
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(
            template_name="registration/login.html", authentication_form=SignInForm
        ),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
]
