"""The running engine, with no Qt: the driver's fires claimed in the store and carried out by the
runner, the recorder that writes them, condition gates, lanes, leases, placement and the
schedule source."""
