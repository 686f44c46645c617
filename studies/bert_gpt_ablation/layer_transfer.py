"""GPT-1 section 5, "Impact of number of layers transferred" (Figure 2 left)."""

from __future__ import annotations

import keras


def transfer_layers(source: keras.Model, target: keras.Model, num_layers: int) -> None:
  """Copies the embeddings and the first `num_layers` blocks of `source` into `target`.

  Both are GPTDecoder / BertEncoder with the same sizes; k = 0 transfers only the embeddings
  (the paper's leftmost point), k = L the whole pretrained model. The other blocks keep their
  random initialisation.
  """
  if not 0 <= num_layers <= len(source.blocks):
    raise ValueError(f"num_layers={num_layers}; expected 0..{len(source.blocks)}")
  if len(target.blocks) < num_layers:
    raise ValueError(f"target has {len(target.blocks)} blocks, fewer than num_layers={num_layers}")
  pairs = [(source.token_embedding, target.token_embedding),
           (source.get_layer("position_embedding"), target.get_layer("position_embedding"))]
  pairs += list(zip(source.blocks[:num_layers], target.blocks[:num_layers]))
  for src, dst in pairs:
    dst.set_weights(src.get_weights())
