// sd-bus from libsystemd (Debian: libsystemd-dev), the maintained D-Bus library the Secret Service
// provider uses (decision 0140). Swift calls only its non-variadic functions.
#include <systemd/sd-bus.h>
