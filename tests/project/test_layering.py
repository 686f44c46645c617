"""bert_keras/ has layers: no package imports a later one in docs/design.md's "Layers" order, and
there is no import cycle. Every import counts: module level and inside functions."""

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIBRARY = os.path.join(ROOT, "bert_keras")
BASE = "bert_keras/*.py"  # the top-level modules: one layer below every package


def _layer_order():
  with open(os.path.join(ROOT, "docs", "design.md"), encoding="utf-8") as f:
    section = f.read().split("## Layers", 1)[1].split("\n## ", 1)[0]
  line = next(line for line in section.splitlines() if line.strip().startswith(BASE))
  return [name.strip() for name in line.split("<")]


def _imports():
  """(importing module, imported module) for every import of a bert_keras module in bert_keras/."""
  for folder, _, files in os.walk(LIBRARY):
    for name in files:
      if not name.endswith(".py"):
        continue
      path = os.path.join(folder, name)
      parts = os.path.relpath(path, ROOT)[:-3].split(os.sep)
      package = parts[:-1]
      module = ".".join(parts[:-1] if name == "__init__.py" else parts)
      with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
      for node in ast.walk(tree):
        if isinstance(node, ast.Import):
          targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
          base = ".".join(package[:len(package) - node.level + 1]) if node.level else ""
          base = ".".join(filter(None, [base, node.module]))
          targets = [f"{base}.{alias.name}" for alias in node.names]
        else:
          continue
        for target in targets:
          if target.startswith("bert_keras."):
            yield module, target


def _node(module):
  """The layer a module belongs to: its package under bert_keras/, or BASE for a top-level one."""
  name = module.split(".")[1] if "." in module else ""
  if os.path.isdir(os.path.join(LIBRARY, name)):
    return name
  return BASE


def _top_level(module):
  return ".".join(module.split(".")[:2])


def test_every_import_points_down_the_written_layer_order():
  order = _layer_order()
  packages = {name for name in os.listdir(LIBRARY) if os.path.isfile(
      os.path.join(LIBRARY, name, "__init__.py"))}
  assert packages <= set(order), f"packages missing from docs/design.md's Layers: {packages - set(order)}"
  upward = sorted(f"{source} imports {target}" for source, target in _imports()
                  if order.index(_node(target)) > order.index(_node(source)))
  assert not upward, "imports against the layer order:\n" + "\n".join(upward)


def test_no_import_cycle_among_the_top_level_modules():
  graph = {}
  for source, target in _imports():
    if _node(source) == _node(target) == BASE and _top_level(source) != _top_level(target):
      graph.setdefault(_top_level(source), set()).add(_top_level(target))
  done, path = set(), []

  def visit(module):
    assert module not in path, f"import cycle: {' -> '.join(path[path.index(module):] + [module])}"
    if module in done:
      return
    path.append(module)
    for target in graph.get(module, ()):
      visit(target)
    path.pop()
    done.add(module)

  for module in list(graph):
    visit(module)


def test_the_orchestration_framework_imports_no_domain_package():
  domain = sorted(f"{source} imports {target}" for source, target in _imports()
                  if _node(source) == "orchestration" and _node(target) not in ("orchestration", BASE))
  assert not domain, "\n".join(domain)
