"""The one rule for an output directory that already holds a run, shared by every writer that
replaces a run in place (export: assets.extra/export_info.json; fine-tuning, evaluation and
prediction: config.json): an earlier run of the same task is replaced; one of another task, or
whose task is not recorded, is refused before anything is loaded or written, since its files would
otherwise sit beside the new run's and pass for its own (SQuAD's predictions.json and
null_odds.json beside an MRPC model). Imports nothing heavy: scripts check it before TensorFlow.
"""

from __future__ import annotations

import sys

from bert_keras.errors import UserError


def check_earlier_task(where: str, what: str, earlier: str | None, task: str,
                       overwrite: bool | None = None) -> None:
  """UserError when `where` (e.g. "output_dir=out/mrpc") holds `what` (e.g. "an export") of a task
  other than `task`; `earlier` None: its task is not recorded. `overwrite` None: the writer has no
  --overwrite, so the answer is another directory; True: replaced, with a warning on stderr."""
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
