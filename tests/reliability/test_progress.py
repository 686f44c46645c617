"""The one progress line (bert_keras/training/progress.py): a step counter with rate and ETA, at a
steady cadence in seconds (not per step); whole lines in a log, one redrawn line on a terminal."""

import io

from bert_keras.progress import Progress, progress_line


class _Terminal(io.StringIO):
  def isatty(self):
    return True


def _run(stream, steps=100, first=5.0, each=0.5):
  """`steps` updates, the first taking `first` seconds (tracing), the others `each`."""
  now = [0.0]
  progress = Progress("train", steps, stream=stream, clock=lambda: now[0])
  for step in range(1, steps + 1):
    now[0] += first if step == 1 else each
    progress.update(step, lambda: {"loss": 1.0 / step})
  return stream.getvalue()


def test_a_log_gets_a_line_every_ten_seconds_with_rate_and_eta():
  lines = _run(io.StringIO()).splitlines()
  # 2 steps/s after the first step; a line each 10 s (20 steps) and one at the end.
  assert [line.split()[2] for line in lines] == ["21/100", "41/100", "61/100", "81/100", "100/100"]
  assert lines[0] == ("train step 21/100 [====                ]  21% 2 steps/s ETA 0:00:40 "
                      "loss=0.04762")
  assert lines[-1].startswith("train step 100/100 [====================] 100% 2 steps/s ETA 0:00:00")


def test_the_rate_leaves_out_the_first_steps_tracing():
  lines = _run(io.StringIO(), first=60.0).splitlines()
  assert "2 steps/s ETA 0:00:40" in lines[0], lines[0]


def test_a_terminal_gets_one_line_redrawn_each_second():
  text = _run(_Terminal())
  assert text.count("\r") == 50 and text.endswith("\n") and text.count("\n") == 1
  assert text.split("\r")[-1].startswith("train step 100/100")


def test_a_line_without_a_known_rate_has_no_eta():
  assert progress_line("evaluate dev", 3, 10) == "evaluate dev step 3/10 [======              ]  30%"


def test_a_count_without_a_total_has_its_rate_in_plain_digits():
  assert progress_line("instances created (worker 7)", 48179, None, 4738.2) == (
      "instances created (worker 7): 48179 so far, 4,738 /s")
