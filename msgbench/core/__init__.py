"""What every layer uses: the spec and its expressions, the histogram layout, strict
JSON, units, paths, config files, interrupts, temporary folders, the terminal filter.

Layer core of docs/architecture.md."""
