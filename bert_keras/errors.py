"""User errors: one line naming the file, line or value, exit status 2, no traceback.

Every script is `app.run(run_main(main), flags_parser=parse_flags)`:
- `parse_flags` turns a bad command line (a required flag missing, an unknown flag, a value that
  does not parse) into one `error: ...` line and exit status 2, instead of absl's usage dump and
  status 1; `--help` still prints the usage, with status 0.
- `run_main` does the same for a `UserError` raised by the library, and for argparse errors of
  the Beam scripts, whose own flags are parsed with argparse inside `main`; their `flags_parser`
  is `pass_flags_to_main`.
Both parsers give every entry point `--verbose` and, without it, call `console.quiet()` before
TensorFlow or Beam is imported (bert_keras/console.py: what is left out of the console and why).
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


# The last line of a worker's traceback that a Beam runner copies into the exception it raises in
# the main process: `bert_keras.errors.UserError: <message>[ [while running '<step>']]`.
_WORKER_USER_ERROR = re.compile(
    r"^(?:bert_keras\.errors\.UserError|(?:[\w.]*\.)?ConfigError): (.+?)"
    r"(?: \[while running '[^\n]*'\])?$", re.MULTILINE)


def _one_line(text: str) -> str:
  return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())


def _fail(message: str) -> None:
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
  """absl `flags_parser` for `app.run`: FLAGS(argv), with flag errors as one `error:` line, exit 2.

  absl's own parser prints the usage and `FATAL Flags parsing error`, then exits with status 1,
  which a caller cannot tell apart from a crash. `--help` exits 0 after printing the usage
  (absl exits 1 there too). Defines `--verbose` (listed by `--help`) and, without it, quiets the
  console.
  """
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
    _fail(f"{e} (see --help)")
  except SystemExit as e:
    if e.code == 1 and _asks_for_help(argv):
      sys.exit(0)
    raise
  _quiet_unless(values.verbose)
  return rest


def _verbose_arg(args) -> bool:
  """The value of `--verbose` / `--verbose=BOOL` in an argparse command line (the last wins); a
  bad value is refused by the script's parser."""
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
  """absl `flags_parser` of the Beam scripts: absl parses nothing and `main` gets all of argv (its
  argparse parser takes the script's flags, `--verbose` among them; Beam takes the rest). Only
  `--verbose` is read here, to quiet the console without it before Beam is imported."""
  from absl import flags  # pylint: disable=import-outside-toplevel

  flags.FLAGS(argv[:1])
  if not _asks_for_help(argv) and "-h" not in argv[1:]:
    _quiet_unless(_verbose_arg(argv[1:]))
  return argv


@contextlib.contextmanager
def _argparse_errors_are_user_errors():
  """Within `main`, argparse's `parser.error` (missing or malformed argument) raises UserError
  instead of printing a usage and exiting itself; `--help` (parser.exit(0)) is unchanged."""
  original = argparse.ArgumentParser.error

  def error(parser, message):
    raise UserError(f"{parser.prog}: {message} (see --help)")

  argparse.ArgumentParser.error = error
  try:
    yield
  finally:
    argparse.ArgumentParser.error = original


def run_main(main):
  """Wraps an absl `main(argv)` so that user errors print one line and exit with status 2.

  Usage in a script: `app.run(run_main(main), flags_parser=parse_flags)`. Errors that are bugs keep
  their traceback.
  """

  @functools.wraps(main)
  def wrapped(argv):
    try:
      with _argparse_errors_are_user_errors():
        return main(argv)
    except UserError as e:
      _fail(str(e))
    except KeyboardInterrupt:
      # Ctrl-C: one line, not the traceback of wherever the program was; 130 = 128 + SIGINT, the
      # shell's status for a program stopped by it. A run's staging directory is removed by the
      # `finally`/`except BaseException` blocks the exception passed through on its way here.
      print("interrupted (Ctrl-C)", file=sys.stderr)
      sys.exit(130)
    except Exception as e:  # pylint: disable=broad-except
      message = unreadable_file(e)
      if message is None:
        raise
      _fail(message)

  return wrapped


def unreadable_file(exception: BaseException):
  """One line for an input path that exists but cannot be read as a file (no read permission, a
  directory where a file is expected), from Python's OSError or TensorFlow's file-system error;
  None for any other exception (a bug keeps its traceback)."""
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


def worker_user_error(exception: BaseException):
  """The message of the UserError a Beam worker raised, if `exception` carries one, else None.

  Beam's multi-process runners raise a RuntimeError in the main process whose text holds the
  worker's traceback; its last `bert_keras.errors.UserError: ...` line is the user's message.
  """
  matches = _WORKER_USER_ERROR.findall(str(exception))
  return matches[-1].strip() if matches else None


@contextlib.contextmanager
def worker_user_errors():
  """Around a Beam pipeline's run: a UserError raised in a worker is raised again here as a
  UserError (so `run_main` prints one line); every other exception is left as it is."""
  try:
    yield
  except UserError:
    raise
  except Exception as e:  # pylint: disable=broad-except
    message = worker_user_error(e)
    if message is None:
      raise
    raise UserError(message) from e


def split_args(text: str, flag: str):
  """A flag's value split like a shell command line (`--beam_pipeline_args`); an unbalanced
  quote is a UserError naming the flag and value."""
  try:
    return shlex.split(text)
  except ValueError as e:
    raise UserError(f"--{flag}={text!r}: {e} (expected shell-style arguments)") from None

