"""The one progress line of every loop: step counter, bar, rate and ETA, on a terminal redrawn
every TTY_EVERY_S, in a log a whole line every LOG_EVERY_S (a long run's log stays readable).
"""

from __future__ import annotations

import sys
import time

TTY_EVERY_S = 1.0
LOG_EVERY_S = 10.0
_BAR = 20


def format_duration(seconds: float) -> str:
  seconds = int(round(seconds))
  return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _rate(per_sec: float) -> str:
  return f"{per_sec:,.0f}" if per_sec >= 100 else f"{per_sec:.3g}"


def progress_line(label: str, step: int, total: int | None, steps_per_sec: float | None = None,
                  values: dict | None = None) -> str:
  """`label step k/n [bar] p% r steps/s ETA h:mm:ss name=value ...` (rate and ETA when known);
  `total` None: `label: k so far, r /s`."""
  if total is None:
    rate = f", {_rate(steps_per_sec)} /s" if steps_per_sec else ""
    return f"{label}: {step} so far{rate}"
  total = max(total, 1)
  done = min(max(step / total, 0.0), 1.0)
  filled = int(_BAR * done)
  parts = [f"{label} step {step}/{total} [{'=' * filled}{' ' * (_BAR - filled)}] {done:4.0%}"]
  if steps_per_sec:
    parts.append(f"{_rate(steps_per_sec)} steps/s ETA {format_duration((total - step) / steps_per_sec)}")
  parts += [f"{k}={v:.4g}" for k, v in sorted((values or {}).items())]
  return " ".join(parts)


class Progress:
  """Prints `progress_line`s of a loop when due. The rate is timed from the end of the first step,
  which traces and compiles (counted in, it would make the ETA minutes off)."""

  def __init__(self, label: str, total: int | None, stream=None, every_s: float | None = None,
               clock=time.monotonic):
    self.label = label
    self.total = total
    self.stream = stream if stream is not None else sys.stderr
    self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
    self.every_s = every_s if every_s is not None else (TTY_EVERY_S if self.tty else LOG_EVERY_S)
    self._clock = clock
    self._last = None  # (time, step) the current window is timed from
    self._rate = None
    self._open = False  # a redrawn line not yet ended (terminal)

  def update(self, step: int, values=None, force: bool = False) -> bool:
    """Prints the line for `step` if due, forced or last; `values`: a dict or a callable giving it."""
    now = self._clock()
    if self._last is None:  # the end of the first step: what the rate is timed from
      self._last = (now, step)
    last_time, last_step = self._last
    last_step_done = self.total is not None and step >= self.total
    if not (force or last_step_done or now - last_time >= self.every_s):
      return False
    if step > last_step and now > last_time:
      self._rate = (step - last_step) / (now - last_time)
    self._last = (now, step)
    values = values() if callable(values) else values
    line = progress_line(self.label, step, self.total, self._rate, values)
    end = "\n" if not self.tty or last_step_done else ""
    self.stream.write(("\r" if self.tty else "") + line + end)
    self.stream.flush()
    self._open = self.tty and not end
    return True

  def close(self) -> None:
    """Ends a redrawn line (a loop that stopped before its last step)."""
    if self._open:
      self.stream.write("\n")
      self.stream.flush()
      self._open = False
