"""chat in the seed document's own text form (seed 003, the Chut benchmark's block)."""


def measurement_block(m: dict) -> str:
    p, x = m["params"], m["metrics"]
    head = f"G:{p['groups']:<6}CPG:{p['clients_per_group']:<4}T:{p['duration_s']:g}\n"
    if m["status"] != "ok":
        return head + f"{m['status'].upper()}: {m['error']}\n"
    lines = [
        ("Sent", int(x["sent_count"])),
        ("Received", int(x["received_count"])),
        ("Average sent per second", x["sent_per_s"]),
        ("Average received per second", x["received_per_s"]),
        ("Average sent per group", x["sent_per_group_count"]),
        ("Average received per group", x["received_per_group_count"]),
        ("Average sent per client", x["sent_per_client_count"]),
        ("Average received per client", x["received_per_client_count"]),
        ("Average sent per client per second", x["sent_per_client_per_s"]),
        ("Average received per client per second", x["received_per_client_per_s"]),
    ]
    return head + "".join(f"{label}: {value}\n" for label, value in lines)
