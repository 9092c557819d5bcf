"""docs/python_api.md's ```python blocks run, in order, in one namespace, in a temporary folder
(matplotlib's Agg canvas: the API's figures never need a display)."""

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[4] / 'docs' / 'python_api.md'


def test_python_api_examples_run(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r'```python\n(.*?)```', DOC.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 4
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv('MPLBACKEND', 'Agg')
    namespace: dict = {'__name__': 'python_api_example'}
    for number, block in enumerate(blocks, start=1):
        exec(compile(block, f'{DOC.name} block {number}', 'exec'), namespace)
    printed = capsys.readouterr().out
    assert 'collisions: 1' in printed
    assert 'figure-eight tracked' in printed and '100 vehicles after 10 s' in printed
    assert 'goal reached: True' in printed
    assert {'eight.png', 'crash.png', 'crash_speeds.png', 'crash_errors.png'} <= {
        path.name for path in tmp_path.iterdir()}
