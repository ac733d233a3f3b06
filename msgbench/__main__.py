import sys

from msgbench.cli import main

sys.exit(main())
