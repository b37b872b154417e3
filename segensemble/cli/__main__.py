"""``python -m segensemble.cli``: the same as the ``segensemble`` command."""

import sys

from segensemble.cli import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
