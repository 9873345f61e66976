"""The proto comparison on descriptor sets the pinned protoc builds from small protos: each rule, by name."""

from __future__ import annotations

import time

import pytest

from codegen.api_changes.protos import ProtoSchema, compare_protos, index_protos
from codegen.api_changes.report import ApiChange, ApiChangeReport
from codegen.envd.protos import parse_protos, read_descriptors

BASE = """
syntax = "proto3";
package fs;
import "google/protobuf/timestamp.proto";

enum FileType {
  FILE_TYPE_UNSPECIFIED = 0;
  FILE_TYPE_FILE = 1;
  FILE_TYPE_DIRECTORY = 2;
}

message EntryInfo {
  string name = 1;
  FileType type = 2;
  int64 size = 4;
  google.protobuf.Timestamp modified_time = 9;
  optional string symlink_target = 10;
  map<string, string> metadata = 11;
  bool is_symlink = 12;
  oneof origin {
    string local = 13;
    string remote = 14;
  }
}

message StatRequest { string path = 1; }
message StatResponse { EntryInfo entry = 1; }
message WatchRequest { string path = 1; }
message WatchResponse { repeated EntryInfo entries = 1; }

service Filesystem {
  rpc Stat(StatRequest) returns (StatResponse);
  rpc Watch(WatchRequest) returns (stream WatchResponse);
}
"""


def schema(text: str) -> ProtoSchema:
    return index_protos(read_descriptors(parse_protos({"spec/envd/fs/fs.proto": text.encode()})), ["fs/fs.proto"])


def changes(new: str, old: str = BASE) -> list[tuple[str, str, str, str]]:
    return [(c.level, c.kind, c.location, c.detail) for c in compare_protos(schema(old), schema(new))]


def edit(old: str, new: str, text: str = BASE) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def test_the_same_protos_are_no_change() -> None:
    assert changes(BASE) == []


def test_comments_and_layout_are_no_change() -> None:
    spread = "// Asks\nmessage StatRequest {\n  string path = 1; // a path\n}"
    commented = edit("message StatRequest { string path = 1; }", spread)
    assert changes(commented) == []
    assert ApiChangeReport(compare_protos(schema(BASE), schema(commented))).level == "none"


def test_a_removed_field_is_major_and_named_with_its_number() -> None:
    assert changes(edit("  bool is_symlink = 12;\n", "")) == [
        ("major", "field removed", "fs.EntryInfo.is_symlink (12)", "")
    ]


def test_an_added_field_is_minor() -> None:
    assert changes(edit("  bool is_symlink = 12;\n", "  bool is_symlink = 12;\n  uint32 mode = 5;\n")) == [
        ("minor", "field added", "fs.EntryInfo.mode (5)", "")
    ]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("int64 size = 4;", "int64 size = 5;", ("major", "field number changed", "fs.EntryInfo.size", "4 -> 5")),
        ("int64 size = 4;", "int32 size = 4;",
         ("major", "field type changed", "fs.EntryInfo.size (4)", "int64 -> int32")),
        ("int64 size = 4;", "repeated int64 size = 4;",
         ("major", "cardinality changed", "fs.EntryInfo.size (4)", "singular -> repeated")),
        ("int64 size = 4;", "optional int64 size = 4;",
         ("major", "cardinality changed", "fs.EntryInfo.size (4)", "singular -> optional")),
        ("map<string, string> metadata = 11;", "map<string, int32> metadata = 11;",
         ("major", "field type changed", "fs.EntryInfo.metadata (11)", "map<string, string> -> map<string, int32>")),
        ("int64 size = 4;", "int64 bytes = 4;", ("major", "field renamed", "fs.EntryInfo.size (4)", "now bytes")),
        ("int64 size = 4;", 'int64 size = 4 [json_name = "bytes"];',
         ("major", "JSON name changed", "fs.EntryInfo.size (4)", "size -> bytes")),
        ("int64 size = 4;", "int64 size = 4 [deprecated = true];",
         ("patch", "options changed", "fs.EntryInfo.size (4)", "field options")),
        ("  FILE_TYPE_DIRECTORY = 2;\n", "",
         ("major", "enum value removed", "fs.FileType.FILE_TYPE_DIRECTORY (2)", "")),
        ("FILE_TYPE_DIRECTORY = 2;", "FILE_TYPE_DIR = 2;",
         ("major", "enum value renamed", "fs.FileType.FILE_TYPE_DIRECTORY (2)", "now FILE_TYPE_DIR")),
        ("FILE_TYPE_DIRECTORY = 2;", "FILE_TYPE_DIRECTORY = 3;",
         ("major", "enum value number changed", "fs.FileType.FILE_TYPE_DIRECTORY", "2 -> 3")),
        ("FILE_TYPE_DIRECTORY = 2;", "FILE_TYPE_DIRECTORY = 2;\n  FILE_TYPE_SYMLINK = 3;",
         ("minor", "enum value added", "fs.FileType.FILE_TYPE_SYMLINK (3)", "")),
        ("returns (stream WatchResponse)", "returns (WatchResponse)",
         ("major", "streaming kind changed", "fs.Filesystem/Watch", "server -> unary")),
        ("rpc Stat(StatRequest)", "rpc Stat(stream StatRequest)",
         ("major", "streaming kind changed", "fs.Filesystem/Stat", "unary -> client")),
        ("rpc Stat(StatRequest) returns (StatResponse)", "rpc Stat(WatchRequest) returns (StatResponse)",
         ("major", "request type changed", "fs.Filesystem/Stat", "fs.StatRequest -> fs.WatchRequest")),
        ("returns (StatResponse)", "returns (WatchResponse)",
         ("major", "response type changed", "fs.Filesystem/Stat", "fs.StatResponse -> fs.WatchResponse")),
        ("  rpc Stat(StatRequest) returns (StatResponse);\n", "",
         ("major", "RPC removed", "fs.Filesystem/Stat", "")),
        ("rpc Stat(", "rpc Lstat(", ("major", "RPC renamed", "fs.Filesystem/Stat", "now Lstat")),
        ("rpc Stat(StatRequest) returns (StatResponse);",
         "rpc Stat(StatRequest) returns (StatResponse);\n  rpc Remove(StatRequest) returns (StatResponse);",
         ("minor", "RPC added", "fs.Filesystem/Remove", "")),
        ("service Filesystem {", "service Files {", ("major", "service renamed", "fs.Filesystem", "now fs.Files")),
    ],
)  # fmt: skip
def test_each_wire_change_is_named_and_graded(old: str, new: str, expected: tuple[str, str, str, str]) -> None:
    assert changes(edit(old, new)) == [expected]


def test_oneof_membership() -> None:
    out_of_oneof = edit("    string remote = 14;\n  }\n", "  }\n  string remote = 14;\n")
    assert changes(out_of_oneof) == [
        ("major", "oneof changed", "fs.EntryInfo.remote (14)", "oneof origin -> no oneof"),
    ]


def test_a_message_renamed_with_the_same_fields_is_not_a_wire_change() -> None:
    renamed = BASE.replace("StatResponse", "StatReply")
    assert changes(renamed) == [("none", "message renamed", "fs.StatResponse", "now fs.StatReply")]
    report = ApiChangeReport(compare_protos(schema(BASE), schema(renamed)))
    assert report.level == "none"
    assert "Python API section" in (report.changes[0].why or "")  # the generated classes' rename is griffe's


def test_a_renamed_message_that_other_messages_use_is_followed_through_them() -> None:
    # EntryInfo is used by two messages, each renamed too: a package-wide rename, leaves first.
    renamed = BASE.replace("EntryInfo", "Entry").replace("StatResponse", "StatReply")
    assert {(level, kind) for level, kind, _, _ in changes(renamed)} == {("none", "message renamed")}


def test_a_renamed_message_with_other_fields_is_a_removal_and_an_addition() -> None:
    found = changes(edit("message StatRequest { string path = 1; }", "message StatQuery { string where = 1; }")
                    .replace("rpc Stat(StatRequest)", "rpc Stat(StatQuery)"))  # fmt: skip
    assert ("major", "message removed", "fs.StatRequest", "") in found
    assert ("minor", "message added", "fs.StatQuery", "") in found
    assert ("major", "request type changed", "fs.Filesystem/Stat", "fs.StatRequest -> fs.StatQuery") in found


def test_an_enum_renamed_with_the_same_values_is_not_a_wire_change() -> None:
    assert changes(BASE.replace("FileType", "EntryType")) == [
        ("none", "enum renamed", "fs.FileType", "now fs.EntryType")
    ]


def test_added_messages_enums_and_services_are_minor() -> None:
    added = BASE + "enum Mode { MODE_UNSPECIFIED = 0; }\nmessage Ping {}\n"
    added += "service Health { rpc Check(Ping) returns (Ping); }\n"
    assert changes(added) == [  # by location; Ping comes with the service that uses it
        ("minor", "service added", "fs.Health", "1 RPC(s), 1 new message(s) and enum(s)"),
        ("minor", "enum added", "fs.Mode", ""),
    ]


def test_what_an_added_rpc_brings_is_said_with_it_and_not_again() -> None:
    stat = "  rpc Stat(StatRequest) returns (StatResponse);\n"
    added = edit(stat, stat + "  rpc Chmod(ChmodRequest) returns (StatResponse);\n")
    added += "message ChmodRequest { Mode mode = 1; message Flags {} map<string, Flags> flags = 2; }\n"
    added += "enum Mode { MODE_UNSPECIFIED = 0; }\n"
    # The request, the enum and the nested message it uses; StatResponse was there before.
    assert changes(added) == [("minor", "RPC added", "fs.Filesystem/Chmod", "3 new message(s) and enum(s)")]


def test_a_removed_service_is_major_and_its_report_is_forced_by_it() -> None:
    start = BASE.index("service Filesystem")
    removed = BASE[:start]
    found = compare_protos(schema(BASE), schema(removed))
    assert [(c.kind, c.location) for c in found] == [("service removed", "fs.Filesystem")]
    assert ApiChangeReport(found).forcing == (ApiChange("major", "service removed", "fs.Filesystem"),)


def test_protos_that_did_not_exist_before_are_all_additions() -> None:
    found = compare_protos(ProtoSchema(), schema(BASE))
    assert {c.level for c in found} == {"minor"}
    assert ("service added", "fs.Filesystem") in {(c.kind, c.location) for c in found}


def test_the_well_known_types_are_referred_to_not_compared() -> None:
    assert not any(name.startswith("google.") for name in schema(BASE).messages)


def test_a_package_rename_of_a_long_chain_of_messages_is_compared_in_bounded_time() -> None:
    """Each message refers to the next, so each round of renames finds one more: rounds are bounded."""
    count = 900  # below the envd lane's 1,000 messages per proto

    def chain(package: str) -> str:
        lines = [f'syntax = "proto3";\npackage {package};']
        lines += [f"message M{i} {{ M{i + 1} next = 1; }}" for i in range(count - 1)]
        return "\n".join([*lines, f"message M{count - 1} {{ string end = 1; }}\n"])

    started = time.perf_counter()
    found = compare_protos(schema(chain("fs")), schema(chain("files")))
    assert time.perf_counter() - started < 30
    renamed = {c.location for c in found if c.kind == "message renamed"}
    # The 64 rounds follow the chain from its end; the rest is read the strict way: removed and added.
    assert renamed == {f"fs.M{i}" for i in range(count - 64, count)}
    assert {c.kind for c in found if c.level == "major"} == {"message removed"}
