"""How much a trained encoder's learned position embeddings say about order (issue 4).

Mean cosine similarity between the position-embedding rows of positions i and i + d, over the first
--length positions (those the pretraining examples use), for a few distances d. Learned positions
that encode order are more alike at distance 1 than at 5 or 50; rows still at their random
initialisation are alike at no distance.

  python studies/pretraining_evidence/position_structure.py \
      --weights demo_out/pipeline/pretrainer/model/encoder/encoder.weights.h5
  # a fully trained BERT for comparison: the all-MiniLM-L6-v2 checkpoint (Hugging Face names)
  minilm=$(python -c 'from bert_keras import resources; print(resources.minilm_dir())')
  python studies/pretraining_evidence/position_structure.py --weights "$minilm/model.safetensors"

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json

import h5py
import numpy as np


def find_position_table(path: str) -> np.ndarray:
  """The one position-embedding table of a Keras .weights.h5 or a Hugging Face .safetensors."""
  found = []
  if path.endswith(".safetensors"):
    from safetensors.numpy import load_file  # pylint: disable=import-outside-toplevel
    found = [v for k, v in load_file(path).items() if "position_embeddings" in k]
  else:
    with h5py.File(path, "r") as weights:
      weights.visititems(lambda name, item: found.append(item[()]) if isinstance(
          item, h5py.Dataset) and "position_embedding" in name else None)
  if len(found) != 1:
    raise SystemExit(f"error: expected one position_embedding table, found {len(found)}")
  return found[0]


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--weights", required=True, help="an encoder .weights.h5 or .safetensors")
  parser.add_argument("--length", type=int, default=128, help="positions the examples use")
  args = parser.parse_args()
  table = find_position_table(args.weights)
  used = table[:args.length]
  unit = used / np.linalg.norm(used, axis=1, keepdims=True)
  cosine = unit @ unit.T
  result = {f"cosine_at_{d}": float(np.mean(np.diagonal(cosine, offset=d)))
            for d in (1, 2, 5, 20, 50)}
  result["row_norm_used"] = float(np.linalg.norm(used, axis=1).mean())
  result["row_norm_unused"] = float(np.linalg.norm(table[args.length:], axis=1).mean())
  print(json.dumps(result, indent=1))


if __name__ == "__main__":
  main()
