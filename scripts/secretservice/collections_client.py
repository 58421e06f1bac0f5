"""Collections through Python's secretstorage against `keychain secret-service` on the private
bus named by DBUS_SESSION_BUS_ADDRESS. CollectionTests runs `create`, restarts the service, then
runs `after-restart`: what was created must have been persisted in the keychain."""
import sys

import secretstorage
from secretstorage.exceptions import ItemNotFoundException

ROOT = "/org/freedesktop/secrets/collection/"


def paths(connection):
    return [c.collection_path for c in secretstorage.get_all_collections(connection)]


def create(connection):
    work = secretstorage.create_collection(connection, "Work Secrets", alias="work")
    assert work.collection_path == ROOT + "work_secrets", work.collection_path
    assert work.get_label() == "Work Secrets"
    # An alias that already names a collection gets that collection back.
    again = secretstorage.create_collection(connection, "Something else", alias="work")
    assert again.collection_path == work.collection_path
    assert secretstorage.get_collection_by_alias(connection, "work").collection_path == work.collection_path
    item = work.create_item("vpn", {"app": "vpn", "user": "alice"}, b"vpn secret\nline two")
    assert item.item_path.startswith(work.collection_path + "/")
    work.set_label("Work")
    assert work.get_label() == "Work"
    empty = secretstorage.create_collection(connection, "Empty One")
    assert empty.collection_path == ROOT + "empty_one"
    # The same label again gets a name of its own.
    assert secretstorage.create_collection(connection, "Empty One").collection_path == ROOT + "empty_one_2"
    assert paths(connection)[0] == ROOT + "login"
    assert {ROOT + "work_secrets", ROOT + "empty_one", ROOT + "session"} <= set(paths(connection))
    found = list(secretstorage.search_items(connection, {"app": "vpn"}))
    assert [f.item_path for f in found] == [item.item_path]
    assert list(secretstorage.get_default_collection(connection).search_items({"app": "vpn"})) == []


def after_restart(connection):
    assert {ROOT + "work_secrets", ROOT + "empty_one", ROOT + "empty_one_2"} <= set(paths(connection))
    work = secretstorage.get_collection_by_alias(connection, "work")
    assert work.collection_path == ROOT + "work_secrets"
    assert work.get_label() == "Work"
    [item] = list(work.search_items({"app": "vpn"}))
    assert item.get_secret() == b"vpn secret\nline two"
    assert item.get_label() == "vpn"
    assert secretstorage.Collection(connection, ROOT + "empty_one").get_label() == "Empty One"
    assert list(secretstorage.Collection(connection, ROOT + "empty_one").get_all_items()) == []
    for name in ("empty_one", "empty_one_2"):
        secretstorage.Collection(connection, ROOT + name).delete()
    work.delete()
    assert set(paths(connection)) == {ROOT + "login", ROOT + "session"}
    assert list(secretstorage.search_items(connection, {"app": "vpn"})) == []
    try:
        secretstorage.get_collection_by_alias(connection, "work")
        raise AssertionError("the alias outlived its collection")
    except ItemNotFoundException:
        pass
    assert secretstorage.get_collection_by_alias(connection, "default").collection_path == ROOT + "login"


if __name__ == "__main__":
    bus = secretstorage.dbus_init()
    {"create": create, "after-restart": after_restart}[sys.argv[1]](bus)
    bus.close()
    print("ok")
