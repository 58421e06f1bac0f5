"""Unlocks the default collection of `keychain secret-service` (private bus named by
DBUS_SESSION_BUS_ADDRESS) through Python's secretstorage, which follows the Unlock prompt and
waits for its Completed signal. Argument: `unlocked` or `dismissed`, what the prompt must end in.
UnlockPromptTests runs it."""
import sys

import secretstorage

expected = sys.argv[1]
bus = secretstorage.dbus_init()
collection = secretstorage.get_default_collection(bus)
assert collection.is_locked()
dismissed = collection.unlock(timeout=60)
if expected == "dismissed":
    assert dismissed is True, dismissed
    assert collection.is_locked()
else:
    assert dismissed is False, dismissed
    assert not collection.is_locked()
    [item] = list(collection.search_items({"k": "v"}))
    assert item.get_secret() == b"fine"
bus.close()
print("ok")
