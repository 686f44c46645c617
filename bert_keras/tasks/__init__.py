"""Fine-tuning tasks (Devlin et al., 2018, sections 4 and 5.3): one module per task or family,
each a `task.Task` registered with `@registry.register_task("name")`."""
