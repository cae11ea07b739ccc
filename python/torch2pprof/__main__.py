"""The console script `torch2pprof`: replaces this process with the CLI binary inside the
package, so exit status, signals and output are the binary's own."""

import os
import sys

from ._api import binary


def main() -> None:
    path = binary()
    try:
        os.execv(path, [path] + sys.argv[1:])
    except OSError as e:
        sys.stderr.write(f"torch2pprof: cannot run {path}: {e.strerror}\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
