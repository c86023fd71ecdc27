import sys

from kindgi.cli.main import main

sys.exit(main())
