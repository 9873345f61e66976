"""The sandbox's users and groups come from its own /etc files, read inside its root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from e2b_local_api.runtime.accounts import Accounts, UnknownUser
from e2b_local_api.runtime.paths import SandboxRoot


def _root(tmp_path: Path, passwd: str | None, group: str | None = None) -> Accounts:
    (tmp_path / "etc").mkdir()
    if passwd is not None:
        (tmp_path / "etc" / "passwd").write_text(passwd)
    if group is not None:
        (tmp_path / "etc" / "group").write_text(group)
    return Accounts(SandboxRoot(tmp_path))


def test_users_from_the_sandbox_passwd(tmp_path: Path) -> None:
    accounts = _root(
        tmp_path,
        "root:x:0:0::/root:/bin/sh\nuser:x:1000:1000::/home/user:/bin/bash\ndev:x:1001:1001::/srv/dev:/bin/sh\n",
    )
    assert accounts.user("dev").home == "/srv/dev" and accounts.user(None).uid == 1000
    with pytest.raises(UnknownUser, match="'nobody-here'"):
        accounts.user("nobody-here")


def test_without_a_passwd_root_and_user_still_exist(tmp_path: Path) -> None:
    accounts = _root(tmp_path, None)
    assert (accounts.user("root").home, accounts.user("user").home) == ("/root", "/home/user")


def test_owner_names_and_numbers(tmp_path: Path) -> None:
    accounts = _root(
        tmp_path, "root:x:0:0::/root:/bin/sh\nuser:x:1000:1000::/home/user:/bin/bash\n", "root:x:0:\nuser:x:1000:\n"
    )
    if os.geteuid() == 0:
        assert accounts.owner_names(1000, 1000) == ("user", "user")
        assert accounts.owner_names(0, 0) == ("root", "root")
        assert accounts.owner_names(4242, 4343) == ("4242", "4343")
    else:
        assert accounts.owner_names(os.geteuid(), os.getegid()) == ("user", "user")


def test_a_passwd_linked_out_of_the_root_is_read_inside(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "inside").write_text("ghost:x:7:7::/ghost:/bin/sh\n")
    os.symlink("../../../../../../inside", tmp_path / "etc" / "passwd")
    accounts = Accounts(SandboxRoot(tmp_path))
    assert accounts.user("ghost").home == "/ghost"
    with pytest.raises(UnknownUser):
        accounts.user("daemon")  # the host's passwd has it; the sandbox's does not
