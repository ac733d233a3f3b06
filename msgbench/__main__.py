import signal
import sys

from msgbench.cli import main

code = main()
# The command is over and its status decided: a Ctrl-C that lands now, while the
# interpreter shuts down (a run's clean-up took the earlier ones), must not turn exit
# status 130 into a death by SIGINT.
signal.signal(signal.SIGINT, signal.SIG_IGN)
sys.exit(code)
