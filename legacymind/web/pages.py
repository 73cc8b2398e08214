"""Sign in and out for the browser pages. The pages themselves belong to their apps (thoughts,
kg, agent, innervoice); the home page to the inner voice, the one app that reads them all."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from legacymind.web.login_guard import SignInForm

urlpatterns = [
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
