"""The messages of a StreamInput call: its start (which process) and each chunk (to stdin or to the terminal)."""

from __future__ import annotations

from typing import Literal

from protobuf import Oneof

from e2b.envd.process import process_pb
from e2b.sandbox import arguments

__all__ = ["STREAM_INPUT_TIMEOUT", "InputKind", "data_request", "keepalive_request", "start_request"]

InputKind = Literal["stdin", "pty"]
# How long an input stream may stay open unless the caller says otherwise (seconds), as in e2b 2.x.
STREAM_INPUT_TIMEOUT = 60.0


def start_request(pid: int) -> process_pb.StreamInputRequest:
    field: Literal["pid"] = "pid"
    selector = process_pb.ProcessSelector(selector=Oneof(field, arguments.pid(pid)))
    event: Literal["start"] = "start"
    return process_pb.StreamInputRequest(event=Oneof(event, process_pb.StreamInputRequest.StartEvent(process=selector)))


def data_request(kind: InputKind, data: object) -> process_pb.StreamInputRequest:
    payload = arguments.text_or_bytes("data", data)
    chunk: process_pb.ProcessInput
    if kind == "stdin":
        stdin: Literal["stdin"] = "stdin"
        chunk = process_pb.ProcessInput(input=Oneof(stdin, payload))
    else:
        pty: Literal["pty"] = "pty"
        chunk = process_pb.ProcessInput(input=Oneof(pty, payload))
    event: Literal["data"] = "data"
    return process_pb.StreamInputRequest(event=Oneof(event, process_pb.StreamInputRequest.DataEvent(input=chunk)))


def keepalive_request() -> process_pb.StreamInputRequest:
    event: Literal["keepalive"] = "keepalive"
    return process_pb.StreamInputRequest(event=Oneof(event, process_pb.StreamInputRequest.KeepAlive()))
