"""The wheel is the library alone: `pip wheel .` holds bert_keras/ (and its data files) and none of
the application folders (components/, pipeline/, configs/), the scripts or the tests."""

import os
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_wheel_holds_the_library_alone(tmp_path):
  # A copy of the sources: building in place would leave build/ and egg-info in the checkout.
  source = tmp_path / "src"
  listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
  for name in listed.stdout.splitlines():
    if os.path.isfile(os.path.join(ROOT, name)):
      (source / name).parent.mkdir(parents=True, exist_ok=True)
      (source / name).write_bytes(open(os.path.join(ROOT, name), "rb").read())
  build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                          "-q", "-w", str(tmp_path / "dist"), str(source)],
                         capture_output=True, text=True, timeout=300)
  assert build.returncode == 0, build.stderr[-3000:]
  (wheel,) = os.listdir(tmp_path / "dist")
  names = zipfile.ZipFile(tmp_path / "dist" / wheel).namelist()
  tops = {name.split("/")[0] for name in names}
  assert {top for top in tops if not top.endswith(".dist-info")} == {"bert_keras"}, sorted(tops)
  assert "bert_keras/text/unicode_tables.npz" in names and "bert_keras/configs/presets.yaml" in names
  assert "bert_keras/orchestration/local_runner.py" in names
  assert not [n for n in names if "/tests/" in n or n.startswith(("components/", "pipeline/"))]
