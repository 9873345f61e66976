"""iter_operations: every operation under `paths`, in document order, whatever else is there."""

from __future__ import annotations

from codegen.openapi.operations import iter_operations, success_statuses


def test_every_operation_in_document_order_with_its_path_and_method() -> None:
    spec = {
        "paths": {
            "/b": {"post": {"operationId": "b1"}, "get": {"operationId": "b0"}, "parameters": [{"name": "x"}]},
            "/a": {"query": {"operationId": "a0"}, "summary": "not an operation"},
        }
    }
    found = [(path, method, op["operationId"]) for path, method, op in iter_operations(spec)]
    # Per path item, methods come in HTTP_METHODS order (get before post), not key order.
    assert found == [("/b", "get", "b0"), ("/b", "post", "b1"), ("/a", "query", "a0")]


def test_what_is_not_a_mapping_is_skipped() -> None:
    spec = {"paths": {"/a": None, "/b": ["get"], "/c": {"get": "not an operation", "put": {}}}}
    assert list(iter_operations(spec)) == [("/c", "put", {})]
    assert list(iter_operations({"paths": []})) == [] and list(iter_operations({})) == []


def test_the_success_statuses_are_the_2xx_responses_in_order() -> None:
    # YAML may read an unquoted status as a number; a range and `default` name no status.
    responses: dict[object, object] = {"409": {}, 204: {}, "200": {}, "2XX": {}, "default": {}, "299": {}, "2000": {}}
    assert success_statuses({"responses": responses}) == (200, 204, 299)
    assert success_statuses({"responses": {"4XX": {}}}) == () == success_statuses({"responses": ["200"]})
