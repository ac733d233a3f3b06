"""What msgbench shows: the run's summary for the terminal (screen, tables), figure
descriptions, the HTML report, the results page, the file formats, the workloads'
view-side plug-ins, the doctor's checks.

Layer views of docs/architecture.md."""
