"""Recipes: the pipeline's configurations and the ablation study's, on top of bert_keras.configs."""
