"""The operation table of the counters and faults names every public route as the router does."""

from __future__ import annotations

import re

import pytest
from e2b_local_api.control.routes import router
from e2b_local_api.http.operations import OPERATION_IDS, operation_for
from fastapi.routing import APIRoute

PUBLIC_ROUTES = [route for route in router.routes if isinstance(route, APIRoute)]


@pytest.mark.parametrize("route", PUBLIC_ROUTES, ids=lambda r: r.operation_id)
def test_each_route_is_counted_under_its_operation_id(route: APIRoute) -> None:
    path = re.sub(r"\{[^}]+\}", "x1", route.path)
    for method in route.methods or ():
        assert operation_for(method, path) == route.operation_id
    assert route.operation_id in OPERATION_IDS


def test_a_snapshot_id_with_its_slash_is_still_a_template_path() -> None:
    assert operation_for("DELETE", "/templates/local/snap:default") == "deleteTemplate"
    assert operation_for("GET", "/_local/sandboxes") is None
    assert operation_for("PATCH", "/sandboxes/x") is None


def test_the_table_has_no_operation_the_router_lacks() -> None:
    assert {r.operation_id for r in PUBLIC_ROUTES} == OPERATION_IDS
