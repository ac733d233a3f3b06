"""The workers on this machine: the target registry, one worker run and its protocol,
the supervisor and the process groups they run under, the CPUs they are placed on,
the machine facts and the brokers' catalogue, the chat server kind's commands.

Layer workers of docs/architecture.md."""
