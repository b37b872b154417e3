"""``python -m segensemble``: the command line, as the ``segensemble`` script runs it (for an environment whose
scripts folder is not on the PATH)."""

import sys

from segensemble.cli import main

if __name__ == "__main__":
    sys.exit(main())
