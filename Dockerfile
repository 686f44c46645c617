# The image every step of the compiled Kubeflow Pipelines spec runs in (bert_keras/pipeline/kfp_compiler.py;
# README "Kubeflow Pipelines and Vertex AI Pipelines"): the pinned requirements (kfp among them, as
# each step is a KFP Python component), Beam's GCP extras (Dataflow, gs:// paths), the embedded data
# wheels, and the project at /app, whose setup.py is Dataflow's --setup_file.
#   docker build -t REGISTRY/bert-keras:TAG . && docker push REGISTRY/bert-keras:TAG
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 TF_CPP_MIN_LOG_LEVEL=2
WORKDIR /app

COPY requirements.txt requirements-data.txt ./
RUN pip install -r requirements.txt "apache-beam[gcp]==2.77.0" \
 && pip install --no-deps -r requirements-data.txt

COPY pyproject.toml setup.py README.md ./
COPY bert_keras bert_keras
RUN pip install --no-deps .
