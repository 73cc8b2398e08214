"""Without chromium the browser tests fail, so a broken page cannot pass `make test`; only an
explicit SKIP_BROWSER=1 skips them."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import require_browser

MISSING = "/nonexistent/chromium"


def test_a_missing_browser_fails_the_test(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SKIP_BROWSER", raising=False)
    with pytest.raises(pytest.fail.Exception, match="need Debian's chromium"):
        require_browser(MISSING)


def test_skip_browser_1_skips_and_nothing_else_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKIP_BROWSER", "1")
    with pytest.raises(pytest.skip.Exception):
        require_browser(MISSING)
    monkeypatch.setenv("SKIP_BROWSER", "yes")
    with pytest.raises(pytest.fail.Exception):
        require_browser(MISSING)
