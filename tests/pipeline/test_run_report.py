"""The run report's training curves: a readable grid, each accuracy beside its baseline."""

import matplotlib

matplotlib.use("Agg")
from matplotlib import image  # pylint: disable=wrong-import-position
from matplotlib import pyplot as plt  # pylint: disable=wrong-import-position

from bert_keras.orchestration.run_record import ComponentRecord, RunRecord  # pylint: disable=wrong-import-position
from bert_keras.orchestration.run_report import curves_figure, write_plots  # pylint: disable=wrong-import-position

# The eleven curves a pretrainer run records, over a short synthetic history.
_NAMES = ["train_loss", "train_mlm_accuracy", "train_mlm_loss", "train_nsp_accuracy",
          "train_nsp_loss", "eval_mlm_accuracy", "eval_mlm_loss", "eval_mlm_unigram_accuracy",
          "eval_nsp_accuracy", "eval_nsp_loss", "eval_nsp_majority_accuracy"]
_CURVES = {f"model/{name}": [[step, 0.1 + 0.01 * i + step / 1000] for step in (10, 20, 30)]
           for i, name in enumerate(_NAMES)}


def test_pretraining_curves_are_a_grid_with_baselines_on_their_accuracy():
  fig = curves_figure("pretrainer", _CURVES)
  try:
    shown = [ax for ax in fig.axes if ax.get_visible()]
    rows, columns = fig.axes[0].get_subplotspec().get_gridspec().get_geometry()
    assert rows >= 2 and columns <= 3, (rows, columns)
    width, height = fig.get_size_inches()
    assert width / height < 2.5, (width, height)
    by_title = {ax.get_title(): {line.get_label() for line in ax.get_lines()} for ax in shown}
    assert by_title["mlm_accuracy"] == {"train_mlm_accuracy", "eval_mlm_accuracy",
                                        "eval_mlm_unigram_accuracy"}
    assert by_title["nsp_accuracy"] == {"train_nsp_accuracy", "eval_nsp_accuracy",
                                        "eval_nsp_majority_accuracy"}
    # Every curve is drawn once; no panel stands for a baseline alone.
    assert sorted(label for labels in by_title.values() for label in labels) == sorted(_NAMES)
    assert not any("unigram" in t or "majority" in t for t in by_title)
  finally:
    plt.close(fig)


def test_the_written_png_is_not_a_strip(tmp_path):
  record = RunRecord(pipeline="p", run_id="r", pipeline_root=str(tmp_path), started=0.0,
                     components=[ComponentRecord(name="pretrainer", spec="s", status="succeeded",
                                                 curves=_CURVES)])
  images = write_plots(record, str(tmp_path))
  assert [f for _, f in images] == ["curves_pretrainer.png"]
  height, width = image.imread(tmp_path / "curves_pretrainer.png").shape[:2]
  assert width / height < 2.5, (width, height)
