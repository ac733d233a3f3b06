"""msgbench: measure how fast message passing really is, on your own machine."""

__version__ = "0.1.0"
