"""Functions of bert_keras/ that take more than N parameters (default 8), widest first.

Settings travel as config objects, not long keyword lists (docs: STYLE "Pass config objects
whole"); model and layer constructors, whose arguments are their config, are left out.

  python bench/parameter_counts.py [N]
"""

import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _is_model_or_layer(cls: ast.ClassDef) -> bool:
  bases = {ast.unparse(base) for base in cls.bases}
  return any(name.startswith(("keras.", "Backbone", "EncoderHead", "tf.keras")) or name in
             ("BackboneTaskModel",) for name in bases)


def wide_functions(limit: int) -> list:
  rows = []
  for path in sorted((ROOT / "bert_keras").rglob("*.py")):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    scopes = [(None, tree.body)] + [(c, c.body) for c in ast.walk(tree) if isinstance(c, ast.ClassDef)]
    for cls, body in scopes:
      for fn in body:
        if not isinstance(fn, ast.FunctionDef) or (fn.name == "__init__" and _is_model_or_layer(cls)):
          continue
        args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
        count = len([a for a in args if a.arg not in ("self", "cls")])
        if count > limit:
          name = f"{cls.name}.{fn.name}" if cls else fn.name
          rows.append((count, f"{path.relative_to(ROOT)}:{fn.lineno} {name}"))
  return sorted(rows, reverse=True)


if __name__ == "__main__":
  limit = int(sys.argv[1]) if len(sys.argv) > 1 else 8
  rows = wide_functions(limit)
  for count, where in rows:
    print(count, where)
  print(f"{len(rows)} functions with more than {limit} parameters")
