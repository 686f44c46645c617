# The image every step of the compiled Kubeflow Pipelines spec runs in (bert_keras/orchestration/kfp_compiler.py;
# README "Kubeflow Pipelines and Vertex AI Pipelines"): the pinned runtime requirements (kfp among them,
# as each step is a KFP Python component; not the test and benchmark packages of
# requirements-test.txt), Beam's GCP extras (requirements-gcp.txt: Dataflow, gs:// paths), the
# embedded data wheels, and the project at /app, whose setup.py is Dataflow's --setup_file. The
# steps run as an unprivileged user.
#   docker build -t REGISTRY/bert-keras:TAG . && docker push REGISTRY/bert-keras:TAG
FROM python:3.11-slim

# BERT_KERAS_IMAGE: `python -m pipeline.compile` run here knows that the paths it bakes
# into the spec are this image's (outside the image it warns that they are the host's).
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 TF_CPP_MIN_LOG_LEVEL=2 \
    BERT_KERAS_IMAGE=1
WORKDIR /app

COPY requirements.txt requirements-gcp.txt requirements-data.txt ./
RUN pip install -r requirements.txt -r requirements-gcp.txt \
 && pip install --no-deps -r requirements-data.txt

# The library is installed (the wheel holds bert_keras/ alone); the application folders sit at /app,
# on the path of every step.
COPY pyproject.toml setup.py README.md ./
COPY bert_keras bert_keras
COPY components components
COPY pipeline pipeline
COPY configs configs
ENV PYTHONPATH=/app
RUN pip install --no-deps . \
 && useradd --create-home --uid 1000 bert
USER bert
