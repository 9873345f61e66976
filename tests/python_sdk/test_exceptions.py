"""e2b._exceptions: the one mapping from an API answer to an exception."""

from __future__ import annotations

import json

import e2b
import httpx
import pytest
from e2b import (
    SANDBOX_PAUSE_REFUSED_ERROR_CODE,
    AuthenticationException,
    InvalidArgumentException,
    NotFoundException,
    RateLimitException,
    SandboxException,
    SandboxNotFoundException,
    SandboxPauseRefusedException,
    ServiceBusyException,
    UnexpectedResponseException,
)
from e2b._exceptions import (
    MAX_DETAIL,
    api_exception_from_code,
    brief,
    handle_api_exception,
    is_json_media_type,
    not_the_api,
)


def body(message: str = "why", **fields: object) -> bytes:
    return json.dumps({"code": 0, "message": message, **fields}).encode()


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, InvalidArgumentException),
        (401, AuthenticationException),
        (404, SandboxNotFoundException),
        (429, RateLimitException),
        (503, ServiceBusyException),
        (500, SandboxException),
        (418, SandboxException),
    ],
)
def test_status_mapping(status: int, cls: type[SandboxException]) -> None:
    error = api_exception_from_code(status, body("the reason"))
    assert type(error) is cls
    assert (error.status_code, error.error_code, str(error)) == (status, None, "the reason")


def test_refusal_is_mapped_on_the_code_for_any_endpoint() -> None:
    error = api_exception_from_code(503, body("agent silent", error_code=SANDBOX_PAUSE_REFUSED_ERROR_CODE))
    assert type(error) is SandboxPauseRefusedException
    assert isinstance(error, ServiceBusyException)
    assert (error.status_code, error.error_code, error.message) == (503, "sandbox_pause_refused", "agent silent")


def test_refusal_code_on_another_status_keeps_the_status_mapping() -> None:
    error = api_exception_from_code(400, body(error_code=SANDBOX_PAUSE_REFUSED_ERROR_CODE))
    assert type(error) is InvalidArgumentException
    assert error.error_code == SANDBOX_PAUSE_REFUSED_ERROR_CODE


def test_unknown_codes_are_carried_not_rejected() -> None:
    error = api_exception_from_code(503, body(error_code="brand_new_reason"))
    assert type(error) is ServiceBusyException
    assert error.error_code == "brand_new_reason"


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"not json",
        b"[1, 2]",
        b'"a string"',
        b"null",
        b'{"message": "m", "error_code": 503}',
        b'{"message": "m", "error_code": ["sandbox_pause_refused"]}',
        b"\xff\xfe",
        b"[" * 100_000,
    ],
)
def test_malformed_bodies_carry_neither_field(raw: bytes) -> None:
    error = api_exception_from_code(503, raw)
    assert type(error) is ServiceBusyException
    assert (error.status_code, error.error_code) == (503, None)
    assert str(error) == "the API answered 503"


def test_decoded_bodies_are_accepted_too() -> None:
    error = api_exception_from_code(503, {"message": "m", "error_code": SANDBOX_PAUSE_REFUSED_ERROR_CODE})
    assert type(error) is SandboxPauseRefusedException


def test_handle_api_exception_reads_a_response_without_a_request() -> None:
    response = httpx.Response(404, json={"code": 404, "message": "gone", "error_code": "sandbox_not_found"})
    error = handle_api_exception(response)
    assert type(error) is SandboxNotFoundException
    assert (error.error_code, str(error)) == ("sandbox_not_found", "gone")


def test_every_public_exception_derives_from_one_base() -> None:
    exceptions = [getattr(e2b, n) for n in e2b.__all__ if n.endswith("Exception")]
    assert len(exceptions) >= 8
    assert all(issubclass(cls, SandboxException) for cls in exceptions)
    assert all(cls.__doc__ for cls in exceptions)


def test_the_refusal_docstring_names_the_reasons_and_the_reboot_caveat() -> None:
    doc = SandboxPauseRefusedException.__doc__ or ""
    for words in ("guest agent", "busy", "pinned", 'on_resume="reboot"'):
        assert words in doc


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [("text/html; charset=utf-8", "text/html; charset=utf-8"), (None, "no content type")],
)
def test_a_non_json_error_answer_names_its_content_type(content_type: str | None, expected: str) -> None:
    headers = {"content-type": content_type} if content_type else {}
    response = httpx.Response(502, content=b"<html>Bad Gateway</html>", headers=headers)
    error = handle_api_exception(response)
    assert type(error) is SandboxException and error.status_code == 502
    assert (
        str(error) == f"the API answered 502 with {expected}, not JSON: is the API URL right, or is a proxy answering?"
    )
    assert type(handle_api_exception(httpx.Response(503, content=b"busy", headers=headers))) is ServiceBusyException


@pytest.mark.parametrize(
    ("content_type", "is_json"),
    [
        ("application/json", True),
        ("Application/JSON; charset=utf-8", True),
        ("application/problem+json", True),
        ("text/html", False),
        ("", False),
        (None, False),
    ],
)
def test_is_json_media_type(content_type: str | None, is_json: bool) -> None:
    assert is_json_media_type(content_type) is is_json


def test_an_answer_that_is_not_the_api_s_is_one_exception_with_a_bounded_message() -> None:
    error = not_the_api("x" * 10_000, status_code=200)
    assert isinstance(error, e2b.UnexpectedResponseException) and isinstance(error, SandboxException)
    assert str(error).startswith("the answer is not the API's: xxx") and str(error).endswith("...")
    assert len(str(error)) == len("the answer is not the API's: ") + MAX_DETAIL
    assert (error.status_code, error.error_code) == (200, None)
    assert str(not_the_api("short")) == "the answer is not the API's: short"


def test_brief_bounds_any_value_from_an_answer() -> None:
    class Hostile:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    assert brief(deep) == "[[[[...]]]]"  # repr() itself would overflow the stack
    assert brief(Hostile()).startswith("<Hostile")  # a repr that fails says nothing more
    assert len(brief("x" * 1_000_000)) < 200
    assert len(brief({str(n): n for n in range(1000)})) < 200


def _answer(status: int, content: bytes, content_type: str) -> httpx.Response:
    request = httpx.Request("DELETE", "https://user:secret@api.test/sandboxes/i1?x=1")
    return httpx.Response(status, content=content, headers={"content-type": content_type}, request=request)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 500])
def test_an_error_page_that_is_not_json_is_not_the_api_s(status: int) -> None:
    error = handle_api_exception(_answer(status, b"<html>nope</html>", "text/html"))
    assert type(error) is UnexpectedResponseException and error.status_code == status
    assert str(error) == (
        f"the answer is not the API's: DELETE https://api.test/sandboxes/i1 answered {status} with text/html, "
        "not JSON: is the API URL right, or is a proxy answering?"
    )
    # Busy means the same from whoever sent it (a gateway, a load balancer): those keep their class.
    for busy, cls in ((429, RateLimitException), (502, SandboxException), (503, ServiceBusyException)):
        assert type(handle_api_exception(_answer(busy, b"<html>busy</html>", "text/html"))) is cls


def test_a_404_is_the_api_s_only_with_its_error_code() -> None:
    gone = handle_api_exception(_answer(404, body("gone", error_code="sandbox_not_found"), "application/json"))
    assert type(gone) is SandboxNotFoundException
    template = handle_api_exception(_answer(404, body("no", error_code="template_not_found"), "application/json"))
    assert type(template) is NotFoundException
    for content in (body("no such path: DELETE /v1/sandboxes/i1"), b"{}", b"[]", b""):
        error = handle_api_exception(_answer(404, content, "application/json"))
        assert type(error) is UnexpectedResponseException, content
        request = "DELETE https://api.test/sandboxes/i1"
        assert str(error).startswith(
            f"the answer is not the API's: {request} answered 404 without the API's error_code"
        )
        assert "secret" not in str(error)
