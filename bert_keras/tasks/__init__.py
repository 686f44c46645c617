"""Fine-tuning tasks (Devlin et al., 2018, section 4 and 5.3), one module per task or family.

Each module subclasses `task.Task` (reader of the official files, packed features, head, loss,
post-processing, metrics) and registers it with `@registry.register_task("name")`; the registry
imports every module here on first lookup, so adding a task is adding one module. Registered:
glue/{cola,sst2,mrpc,stsb,qqp,mnli,qnli,rte,wnli}, squad_v1, squad_v2, swag, conll2003, and the
embedded real sets polarity and lee_similarity. `finetuning.run_finetuning` drives any of them
(scripts/run_finetuning.py is its command line); presets live in bert_keras/configs/tasks.py.
"""
