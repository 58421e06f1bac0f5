"""Holds a Secret Service session of its own while another client tries to use and close it.
Opens a `plain` session, finds the item with attribute k=v, prints "SESSION ITEM", then waits
(at most a minute) until the file named by its argument exists, reads the item's secret through
its session (which must still be open) and prints "ok". SessionOwnershipTests runs it."""
import os
import sys
import time

from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection

release = sys.argv[1]
service = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets", interface="org.freedesktop.Secret.Service")
connection = open_dbus_connection(bus="SESSION")
_, session = connection.send_and_get_reply(new_method_call(service, "OpenSession", "sv", ("plain", ("s", "")))).body
unlocked, _ = connection.send_and_get_reply(new_method_call(service, "SearchItems", "a{ss}", ({"k": "v"},))).body
[item] = unlocked
print(session, item, flush=True)
deadline = time.monotonic() + 60
while not os.path.exists(release):
    if time.monotonic() > deadline:
        sys.exit("never released")
    time.sleep(0.02)
address = DBusAddress(item, bus_name="org.freedesktop.secrets", interface="org.freedesktop.Secret.Item")
(secret,) = connection.send_and_get_reply(new_method_call(address, "GetSecret", "o", (session,))).body
assert bytes(secret[2]) == b"fine", secret
connection.close()
print("ok", flush=True)
