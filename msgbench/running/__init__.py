"""How a run is planned and measured: the suites, the plan and the runner, calibration,
builds, the brokers (services), the machine's limits, probe and tuning, the progress
line, and the workloads' run-side plug-ins.

Layer running of docs/architecture.md."""
