"""``manage.py`` with a bad setting: the message naming the variable, without a traceback."""

from __future__ import annotations

from tests.support.settings_process import manage_process


def test_a_bad_value_is_one_line_naming_the_variable():
    proc = manage_process("check", EMBEDDING_PROVIDER="bogus")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        "Configuration error: EMBEDDING_PROVIDER='bogus' is not one of openai, local, hash"
    )


def test_a_good_configuration_still_runs_the_command():
    proc = manage_process("check")
    assert proc.returncode == 0, proc.stderr
    assert "System check identified no issues" in proc.stdout
