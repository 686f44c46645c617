"""User errors: one line naming the file, line or value, exit status 2, no traceback.

Every script is `app.run(run_main(main), flags_parser=parse_flags)` (the Beam scripts, which parse
with argparse inside `main`, use `pass_flags_to_main`); both parsers take `--verbose` and, without
it, call `console.quiet()` before TensorFlow or Beam is imported.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import re
import shlex
import sys

_HELP_FLAGS = ("help", "helpshort", "helpfull", "helpxml", "?")


class UserError(Exception):
  """Bad input from the user (missing file, malformed row, mismatched config). Never a bug."""


# A worker's UserError as a Beam runner copies it into the main process's exception.
_WORKER_USER_ERROR = re.compile(
    r"^(?:bert_keras\.errors\.UserError|(?:[\w.]*\.)?ConfigError): (.+?)"
    r"(?: \[while running '[^\n]*'\])?$", re.MULTILINE)


def _one_line(text: str) -> str:
  return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())


def fail(message: str) -> None:  # one `error:` line, exit 2
  print(f"error: {_one_line(message)}", file=sys.stderr)
  sys.exit(2)


def _asks_for_help(argv) -> bool:
  for arg in argv[1:]:
    if arg == "--":
      return False
    name = arg.lstrip("-").split("=", 1)[0]
    if arg.startswith("-") and name in _HELP_FLAGS:
      return True
  return False


def _quiet_unless(verbose: bool) -> None:
  if not verbose:
    from bert_keras import console  # pylint: disable=import-outside-toplevel
    console.quiet()


def parse_flags(argv):
  """absl `flags_parser`: FLAGS(argv), a flag error one `error:` line and exit 2 (absl's usage
  dump exits 1, like a crash); `--help` exits 0. Defines `--verbose`; without it, quiets the console."""
  from absl import flags  # pylint: disable=import-outside-toplevel
  from bert_keras.console import VERBOSE_HELP  # pylint: disable=import-outside-toplevel

  values = flags.FLAGS
  # Defined here, not at import: a library user's own absl flags may have a --verbose.
  if "verbose" not in values:
    flags.DEFINE_bool("verbose", False, VERBOSE_HELP, flag_values=values)
    values.register_key_flag_for_module(sys.argv[0], values["verbose"])  # listed by --help
  try:
    rest = values(argv)
  except flags.Error as e:
    fail(f"{e} (see --help)")
  except SystemExit as e:
    if e.code == 1 and _asks_for_help(argv):
      sys.exit(0)
    raise
  _quiet_unless(values.verbose)
  return rest


def _verbose_arg(args) -> bool:
  """`--verbose` / `--verbose=BOOL` of an argparse command line (the last wins)."""
  verbose = False
  for arg in args:
    if arg == "--":
      break
    if arg == "--verbose":
      verbose = True
    elif arg.startswith("--verbose="):
      verbose = arg.split("=", 1)[1].lower() in ("1", "true", "yes")
  return verbose


def pass_flags_to_main(argv):
  """absl `flags_parser` of the Beam scripts, whose `main` parses all of argv with argparse; only
  `--verbose` is read here, to quiet the console before Beam is imported."""
  from absl import flags  # pylint: disable=import-outside-toplevel

  flags.FLAGS(argv[:1])
  if not _asks_for_help(argv) and "-h" not in argv[1:]:
    _quiet_unless(_verbose_arg(argv[1:]))
  return argv


def _argparse_error(parser, message):
  raise UserError(f"{parser.prog}: {message} (see --help)")


def run_main(main):
  """Wraps an absl `main(argv)`: a user error prints one line, exit 2; a bug keeps its traceback."""

  @functools.wraps(main)
  def wrapped(argv):
    # Within `main`, argparse's `parser.error` raises UserError instead of a usage and exit 2.
    original = argparse.ArgumentParser.error
    argparse.ArgumentParser.error = _argparse_error
    try:
      return main(argv)
    except UserError as e:
      fail(str(e))
    except KeyboardInterrupt:
      # One line, not a traceback; 130 = 128 + SIGINT, the shell's status for it.
      print("interrupted (Ctrl-C)", file=sys.stderr)
      sys.exit(130)
    except Exception as e:  # pylint: disable=broad-except
      message = unreadable_file(e)
      if message is None:
        raise
      fail(message)
    finally:
      argparse.ArgumentParser.error = original

  return wrapped


def unreadable_file(exception: BaseException):
  """One line for an existing input path that cannot be read as a file (Python's OSError or
  TensorFlow's file-system error), else None."""
  if isinstance(exception, (PermissionError, IsADirectoryError, NotADirectoryError)):
    if exception.filename:
      return f"{exception.filename}: cannot read it ({exception.strerror})"
    return None
  kind = type(exception).__name__
  if type(exception).__module__.startswith("tensorflow") and kind in (
      "PermissionDeniedError", "FailedPreconditionError"):
    text = _one_line(getattr(exception, "message", exception))
    # TensorFlow says `<path>; Is a directory` or `<path>; Permission denied`.
    path, _, reason = text.rpartition("; ")
    if reason in ("Is a directory", "Permission denied", "Not a directory") and path:
      return f"{path}: cannot read it ({reason})"
  return None


@contextlib.contextmanager
def worker_user_errors():
  """Around a Beam pipeline's run: a worker's UserError, whose traceback text Beam's runners put in
  the main process's exception, is raised again here as a UserError."""
  try:
    yield
  except UserError:
    raise
  except Exception as e:  # pylint: disable=broad-except
    matches = _WORKER_USER_ERROR.findall(str(e))
    if not matches:
      raise
    raise UserError(matches[-1].strip()) from e


def split_args(text: str, flag: str):
  """A flag's value split like a shell command line; UserError for an unbalanced quote."""
  try:
    return shlex.split(text)
  except ValueError as e:
    raise UserError(f"--{flag}={text!r}: {e} (expected shell-style arguments)") from None

