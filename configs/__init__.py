"""Recipes on top of bert_keras.configs; values only: configs/<kind>/<name>.json (`Config.from_file`)."""

import os

from bert_keras.configs.base import require

DIR = os.path.dirname(os.path.abspath(__file__))


def recipe_names(kind: str) -> list[str]:
  return sorted(n[:-5] for n in os.listdir(os.path.join(DIR, kind)) if n.endswith(".json"))


def recipe_path(kind: str, name: str) -> str:
  """configs/<kind>/<name>.json; an error naming the recipes of `kind` when there is none."""
  require(name in recipe_names(kind), f"unknown recipe {name!r}: no configs/{kind}/{name}.json; "
          f"expected one of {recipe_names(kind)}")
  return os.path.join(DIR, kind, f"{name}.json")
