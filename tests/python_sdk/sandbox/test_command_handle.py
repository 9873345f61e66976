"""The decoding of a process's event stream (`OutputDecoder`), byte by byte where it matters."""

# The events are built with a oneof's field name as a plain str; what is checked is the decoder.
# mypy: disable-error-code="arg-type"

from __future__ import annotations

import pytest
from e2b import CommandExitException, CommandResult, SandboxException, UnexpectedResponseException
from e2b.envd.process import process_pb
from e2b.sandbox.commands.command_handle import OutputDecoder, start_pid
from protobuf import Oneof


def data(kind: str, chunk: bytes) -> process_pb.StartResponse:
    event = process_pb.ProcessEvent.DataEvent(output=Oneof(kind, chunk))
    return process_pb.StartResponse(event=process_pb.ProcessEvent(event=Oneof("data", event)))


def end(exit_code: int, error: str | None = None) -> process_pb.StartResponse:
    event = process_pb.ProcessEvent.EndEvent(exit_code=exit_code, exited=True)
    if error is not None:
        event.error = error
    return process_pb.StartResponse(event=process_pb.ProcessEvent(event=Oneof("end", event)))


def start(pid: int) -> process_pb.StartResponse:
    return process_pb.StartResponse(
        event=process_pb.ProcessEvent(event=Oneof("start", process_pb.ProcessEvent.StartEvent(pid=pid)))
    )


def test_a_character_split_at_every_byte_comes_out_whole() -> None:
    text = "é€😀 ok"
    raw = text.encode()
    decoder = OutputDecoder()
    pieces = [piece for byte in raw for piece in decoder.feed(data("stdout", bytes([byte])))]
    assert "".join(p[0] for p in pieces if isinstance(p[0], str)) == text
    assert all("\ufffd" not in p[0] for p in pieces if isinstance(p[0], str))
    decoder.feed(end(0))
    assert decoder.result() == CommandResult(stdout=text, stderr="", exit_code=0, error=None)


def test_stdout_and_stderr_decode_apart() -> None:
    decoder = OutputDecoder()
    assert decoder.feed(data("stdout", b"\xc3")) == []
    assert decoder.feed(data("stderr", b"\xe2\x82")) == []
    assert decoder.feed(data("stdout", b"\xa9")) == [("é", None, None)]
    assert decoder.feed(data("stderr", b"\xac")) == [(None, "€", None)]


def test_an_unfinished_character_is_flushed_as_a_replacement_at_the_end() -> None:
    decoder = OutputDecoder()
    decoder.feed(data("stdout", b"a\xc3"))
    assert decoder.feed(end(0)) == [("\ufffd", None, None)]
    assert decoder.stdout == "a\ufffd"


def test_terminal_bytes_pass_untouched_and_are_not_kept() -> None:
    decoder = OutputDecoder()
    assert decoder.feed(data("pty", b"\x1b[0m\xff")) == [(None, None, b"\x1b[0m\xff")]
    assert decoder.stdout == ""


def test_without_retain_output_nothing_is_kept() -> None:
    decoder = OutputDecoder(retain_output=False)
    assert decoder.feed(data("stdout", b"x" * 1000)) == [("x" * 1000, None, None)]
    decoder.feed(end(0))
    assert (decoder.stdout, decoder.result().stdout) == (None, None)


def passing_bytes(retain_output: bool) -> OutputDecoder:
    decoder = OutputDecoder(retain_output)
    decoder.pass_bytes = True
    return decoder


def test_passing_bytes_hands_on_envd_s_bytes_untouched() -> None:
    # What `e2b sandbox exec` writes: no byte replaced by U+FFFD, none held back for a character to end.
    decoder = passing_bytes(retain_output=False)
    assert decoder.feed(data("stdout", b"\xff\xfe\xc3")) == [(b"\xff\xfe\xc3", None, None)]
    assert decoder.feed(data("stderr", b"\x00\x80")) == [(None, b"\x00\x80", None)]
    assert decoder.feed(data("stdout", b"")) == []
    assert decoder.feed(end(0)) == []  # nothing was held: nothing comes out twice
    assert (decoder.stdout, decoder.result().stdout) == (None, None)


def test_passing_bytes_keeps_text_for_the_result() -> None:
    decoder = passing_bytes(retain_output=True)
    assert decoder.feed(data("stdout", b"a\xc3")) == [(b"a\xc3", None, None)]
    assert decoder.feed(data("stdout", b"\xa9\xff")) == [(b"\xa9\xff", None, None)]
    assert decoder.feed(data("stderr", b"\xe2\x82")) == [(None, b"\xe2\x82", None)]
    assert decoder.feed(end(0)) == []
    assert decoder.result() == CommandResult(stdout="a\xe9\ufffd", stderr="\ufffd", exit_code=0, error=None)


def test_a_non_zero_exit_raises_with_everything() -> None:
    decoder = OutputDecoder()
    decoder.feed(data("stderr", b"bad"))
    decoder.feed(end(-1, "signal: killed"))
    with pytest.raises(CommandExitException) as caught:
        decoder.result()
    assert (caught.value.exit_code, caught.value.stderr, caught.value.error) == (-1, "bad", "signal: killed")
    assert str(caught.value) == "Command exited with code -1 and error:\nbad"


def test_a_stream_without_an_end_has_no_result() -> None:
    decoder = OutputDecoder()
    decoder.feed(data("stdout", b"x"))
    with pytest.raises(SandboxException, match="before the command did"):
        decoder.result()


def test_the_first_event_must_be_the_start() -> None:
    assert start_pid(start(42), "start") == 42
    with pytest.raises(UnexpectedResponseException, match="first event"):
        start_pid(data("stdout", b"x"), "start the command")
    with pytest.raises(UnexpectedResponseException):
        start_pid(process_pb.StartResponse(), "start the command")
