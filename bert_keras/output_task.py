"""An output directory holding a run of another task (or of an unrecorded one) is refused before
anything is written: its files would sit beside the new run's and pass for its own. Imports
nothing heavy: scripts check it before TensorFlow.
"""

from __future__ import annotations

import sys

from bert_keras.errors import UserError


def check_earlier_task(where: str, what: str, earlier: str | None, task: str,
                       overwrite: bool | None = None) -> None:
  """UserError when `where` holds `what` of a task other than `task` (`earlier`, None when not
  recorded). `overwrite` None: the writer has no --overwrite; True: replaced, with a warning."""
  if earlier == task:
    return
  held = (f"{what} of task {earlier!r}" if earlier is not None else
          f"{what} whose task is not recorded")
  if not overwrite:
    fix = ("pass --overwrite to replace it, or choose another --output_dir" if overwrite is not None
           else "choose another --output_dir (or empty this one)")
    raise UserError(f"{where} holds {held}, not of task {task!r}: {fix}")
  print(f"warning: {where}: replacing {held} with one of task {task!r} (--overwrite)",
        file=sys.stderr)
