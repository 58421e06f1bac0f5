"""Python clients against `keychain secret-service` on the private bus named by
DBUS_SESSION_BUS_ADDRESS (SecretServiceTests runs this with pytest from a venv)."""
import secretstorage
import pytest
from keyring.backends import SecretService
from keyring.testing.backend import BackendBasicTests


@pytest.fixture
def connection():
    bus = secretstorage.dbus_init()
    yield bus
    bus.close()


def test_default_collection_store_search_secret(connection):
    collection = secretstorage.get_default_collection(connection)
    assert not collection.is_locked()
    attributes = {"app": "python", "key with spaces": "välue = 1", "empty": ""}
    item = collection.create_item("python label", attributes, b"secret\nwith newline", replace=True)
    assert item.item_path.startswith("/org/freedesktop/secrets/collection/login/")
    again = collection.create_item("python label 2", attributes, b"replaced", replace=True)
    assert again.item_path == item.item_path
    found = list(secretstorage.search_items(connection, {"app": "python"}))
    assert [f.item_path for f in found] == [item.item_path]
    assert found[0].get_secret() == b"replaced"
    assert found[0].get_label() == "python label 2"
    assert found[0].get_attributes() == attributes
    assert found[0].get_created() > 0
    found[0].set_label("renamed")
    assert item.get_label() == "renamed"
    item.delete()
    assert list(secretstorage.search_items(connection, {"app": "python"})) == []


def test_session_collection_is_in_memory(connection):
    collection = secretstorage.Collection(connection, "/org/freedesktop/secrets/collection/session")
    item = collection.create_item("temp", {"kind": "session"}, b"transient")
    assert item.get_secret() == b"transient"
    assert [i.item_path for i in collection.search_items({"kind": "session"})] == [item.item_path]


class TestKeyringSecretService(BackendBasicTests):
    """keyring's own backend tests, through its SecretService backend."""

    def init_keyring(self):
        return SecretService.Keyring()
