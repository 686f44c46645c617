"""GPT-1 (Radford et al., 2018) beside BERT: its BPE tokenizer, traversal-style task inputs, tasks,
losses, language-model data and training runs. The GPT models are in bert_keras/models (GPTDecoder
and its heads); the BERT+GPT ablation study that uses both is in studies/bert_gpt_ablation."""
