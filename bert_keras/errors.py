"""User errors: one line naming the file, line or value, exit status 2, no traceback."""

from __future__ import annotations

import functools
import sys


class UserError(Exception):
  """Bad input from the user (missing file, malformed row, mismatched config). Never a bug."""


def run_main(main):
  """Wraps an absl `main(argv)` so that user errors print one line and exit with status 2.

  Usage in a script: `app.run(run_main(main))`. Errors that are bugs keep their traceback.
  """

  @functools.wraps(main)
  def wrapped(argv):
    try:
      return main(argv)
    except UserError as e:
      print(f"error: {e}", file=sys.stderr)
      sys.exit(2)

  return wrapped
