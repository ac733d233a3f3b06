"""chat in the seed document's own text form (seed 003, the Chut benchmark's block).

As in the seed, Received and the received averages count what arrived before T.
"""


def measurement_block(m: dict) -> str:
    p, x = m["params"], m["metrics"]
    head = f"G:{p['groups']:<6}CPG:{p['clients_per_group']:<4}T:{p['duration_s']:g}\n"
    if m["status"] != "ok":
        return head + f"{m['status'].upper()}: {m['error']}\n"
    lines = [
        ("Sent", int(x["sent_count"])),
        ("Received", int(x["received_in_window_count"])),
        ("Average sent per second", x["sent_per_s"]),
        ("Average received per second", x["received_per_s"]),
        ("Average sent per group", x["sent_per_group_count"]),
        ("Average received per group", x["received_per_group_count"]),
        ("Average sent per client", x["sent_per_client_count"]),
        ("Average received per client", x["received_per_client_count"]),
        ("Average sent per client per second", x["sent_per_client_per_s"]),
        ("Average received per client per second", x["received_per_client_per_s"]),
    ]
    block = head + "".join(f"{label}: {value}\n" for label, value in lines)
    # The seed's Received stopped counting at T; what arrived in the drain is said
    # after the block rather than folded into the seed's figures.
    late = int(x["received_count"]) - int(x["received_in_window_count"])
    return block + f"(after T, in the drain: {late} more received; {int(x['received_count'])} in all)\n"
