"""Other machines: the host inventory and ssh (inventory), the remote end, placement of
roles on hosts and namespaces, the test bed of namespaced hosts, and runs split over
hosts (the chat server kind's).

Layer hosts of docs/architecture.md."""
