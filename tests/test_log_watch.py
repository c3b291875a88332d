"""The conftest watch for logged tracebacks (issue 19) can fail: a test that logs one fails, an expected one
passes, one logged by a thread later fails the test then running, and one logged between tests the run."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

WATCH = Path(__file__).with_name("conftest.py").read_text(encoding="utf-8").split(
    "# --- no unhandled traceback in the log", 1)[1]


@pytest.fixture
def watched(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest("from typing import Any\nimport pytest\n# ---" + WATCH)
    return pytester


def test_a_logged_traceback_fails_its_test(watched: pytest.Pytester) -> None:
    watched.makepyfile(
        """
        import logging
        import pytest

        def test_logs_one():
            try:
                1 / 0
            except ZeroDivisionError:
                logging.getLogger("app").exception("answer failed")

        @pytest.mark.expect_traceback
        def test_expects_one():
            try:
                1 / 0
            except ZeroDivisionError:
                logging.getLogger("app").exception("a fault on purpose")

        def test_a_warning_without_traceback_is_fine():
            logging.getLogger("app").warning("refused a body: not an object")
        """
    )
    result = watched.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, errors=1)  # in a subprocess: the outer watch must not see these
    result.stdout.fnmatch_lines(["*1 unhandled traceback(s) logged during test_a_logged_traceback_fails_its_test.py"
                                 "::test_logs_one*", "*ZeroDivisionError*"])


def test_a_traceback_a_thread_logs_later_still_fails_the_run(watched: pytest.Pytester) -> None:
    """Logged while another test runs, it fails that one (it names the record); between tests, the run."""
    watched.makepyfile(
        """
        import logging
        import threading
        import time

        def test_leaves_a_thread():
            def later():
                time.sleep(0.3)
                try:
                    raise RuntimeError("late")
                except RuntimeError:
                    logging.getLogger("worker").exception("lost a request")
            threading.Thread(target=later).start()

        def test_next():
            time.sleep(0.6)

        def test_last():
            pass
        """
    )
    result = watched.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*unhandled traceback(s) logged during*::test_next*", "*RuntimeError: late*"])


def test_between_tests_is_reported_at_the_end(watched: pytest.Pytester) -> None:
    watched.makepyfile(
        """
        import logging

        try:  # at import (collection): outside every test
            raise RuntimeError("outside the tests")
        except RuntimeError:
            logging.getLogger("worker").exception("lost a request")

        def test_one():
            pass
        """
    )
    result = watched.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*tracebacks logged between tests*", "*RuntimeError: outside the tests*"])
