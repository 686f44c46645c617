"""Name -> Task class registry; every module in bert_keras/tasks/ (and EXTRA_TASK_MODULES) is
imported on first lookup."""

from __future__ import annotations

import importlib
import pkgutil

from bert_keras.errors import UserError

_TASKS: dict[str, type] = {}
_IMPORTED = False
# Task modules outside this package, imported on first lookup too (GPT-1's tasks: gpt/<task>).
EXTRA_TASK_MODULES = ("bert_keras.gpt.gpt_task",)


def register_task(name: str):
  """Class decorator: registers a Task subclass under `name` and sets its `name` attribute."""

  def decorate(cls):
    if name in _TASKS and _TASKS[name] is not cls:
      raise ValueError(f"task {name!r} is registered twice ({_TASKS[name].__name__}, "
                       f"{cls.__name__})")
    cls.name = name
    _TASKS[name] = cls
    return cls

  return decorate


def _import_task_modules() -> None:
  global _IMPORTED
  if _IMPORTED:
    return
  import bert_keras.tasks as package
  for module in pkgutil.iter_modules(package.__path__):
    if not module.ispkg:
      importlib.import_module(f"{package.__name__}.{module.name}")
  for name in EXTRA_TASK_MODULES:
    importlib.import_module(name)
  _IMPORTED = True


def task_names() -> list[str]:
  _import_task_modules()
  return sorted(_TASKS)


def get_task_class(name: str) -> type:
  _import_task_modules()
  if name not in _TASKS:
    raise UserError(f"unknown task {name!r}; expected one of {sorted(_TASKS)}")
  return _TASKS[name]


def get_task(config):
  """Instantiates the task named by `config.task` with that config."""
  return get_task_class(config.task)(config)
