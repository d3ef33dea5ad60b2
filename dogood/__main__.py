"""``python -m dogood``: the same as the ``dogood`` command."""

import sys

from dogood.cli import main

sys.exit(main())
