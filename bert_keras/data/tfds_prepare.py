"""A tensorflow-datasets builder, prepared, or one line saying why not. Without a network tfds
retries each download for about four minutes, so an unprepared dataset is first checked against
one quick request.
"""

from __future__ import annotations

from bert_keras.errors import UserError

# tfds's own storage; its downloads need the same network.
PROBE_URL = "https://storage.googleapis.com"
PROBE_TIMEOUT_S = 10


def prepared_builder(name: str, data_dir: str | None):
  """tfds.builder(name, data_dir=data_dir), downloaded and prepared if it was not yet."""
  import tensorflow_datasets as tfds  # pylint: disable=import-outside-toplevel

  try:
    builder = tfds.builder(name, data_dir=data_dir)
    if not builder.is_prepared():
      import requests  # pylint: disable=import-outside-toplevel  (a tfds dependency)
      try:
        requests.head(PROBE_URL, timeout=PROBE_TIMEOUT_S)
      except requests.RequestException as e:
        raise tfds_error(name, data_dir, ConnectionError(
            f"not prepared there, and {PROBE_URL} cannot be reached: no network ({type(e).__name__})"))
      builder.download_and_prepare()
  except UserError:
    raise
  except Exception as e:  # pylint: disable=broad-except
    raise tfds_error(name, data_dir, e) from e
  return builder


def tfds_error(name: str, data_dir: str | None, error: Exception) -> UserError:
  """One line naming a tfds dataset that cannot be prepared, its data dir and the reason."""
  reason = next((line.strip() for line in str(error).splitlines() if line.strip()), "")
  if len(reason) > 160:
    reason = reason[:157] + "..."
  return UserError(f"tfds dataset {name!r} (data_dir={data_dir or 'the tfds default'}): cannot "
                   f"load, download or prepare it ({type(error).__name__}: {reason}); without a "
                   "network, prepare it once where there is one and pass that data_dir")
