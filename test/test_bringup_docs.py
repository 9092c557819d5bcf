"""docs/parameters.md is what the generator writes now; docs/bringup.md names only real things."""

import importlib.util
import re

import pytest
import yaml
from bringup_support import REPO, VEHICLE_PRESETS, command_problems

BRINGUP = REPO / 'docs' / 'bringup.md'


def load_tool(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / 'tools' / f'{name}.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_parameter_reference_is_up_to_date_with_the_declarations():
    generator = load_tool('gen_param_docs')
    expected = generator.render({node: generator.node_specs(node) for node in generator.NODES})
    assert (REPO / 'docs' / 'parameters.md').read_text() == expected, \
        'docs/parameters.md is out of date: run python tools/gen_param_docs.py'


def test_parameter_reference_documents_every_node_and_parameter():
    generator = load_tool('gen_param_docs')
    text = (REPO / 'docs' / 'parameters.md').read_text()
    for node in generator.NODES:
        assert f'## {node}' in text
        for spec in generator.node_specs(node):
            assert f'| `{spec.name}` |' in text, f'{node}: {spec.name}'


def code_lines() -> list[str]:
    """Every command line in the code blocks of bringup.md (continuations joined)."""
    blocks = re.findall(r'```bash\n(.*?)```', BRINGUP.read_text(), flags=re.S)
    lines = []
    for block in blocks:
        for line in block.replace('\\\n', ' ').splitlines():
            line = line.split('  #')[0].strip()
            if line:
                lines.append(line)
    return lines


@pytest.mark.parametrize('line', [line for line in code_lines()
                                  if line.startswith(('ros2 launch', 'ros2 run'))])
def test_bringup_ros2_commands_are_valid(line):
    assert not command_problems(line), command_problems(line)


def test_bringup_docker_commands_name_existing_services():
    services = set(yaml.safe_load((REPO / 'docker-compose.yml').read_text())['services'])
    for line in code_lines():
        words = line.split()
        if 'compose' in words and ('up' in words or 'run' in words):
            verb = words.index('up') if 'up' in words else words.index('run')
            named = [w for w in words[verb + 1:] if not w.startswith('-')]
            assert set(named[:1] if 'run' in words else named) <= services, line


def test_bringup_names_only_existing_repository_files():
    text = BRINGUP.read_text()
    paths = set(re.findall(r'`((?:launch|params|rviz|plotjuggler|docker|tools|docs)/[\w./-]+)`',
                           text))
    assert paths
    for path in paths:
        assert (REPO / path).exists(), path
    for name in re.findall(r'`(\w+\.launch\.py)`', text):
        assert (REPO / 'launch' / name).is_file(), name


def test_bringup_lists_every_preset():
    text = BRINGUP.read_text()
    for path in VEHICLE_PRESETS:
        assert f'| `{path.stem}` |' in text, path.stem


def test_the_readme_stays_a_door_of_at_most_150_lines():
    """Issue 35: what it is, set-up, drive it, run a scenario, results, links; no more."""
    lines = (REPO / 'README.md').read_text().splitlines()
    assert len(lines) <= 150, f'README.md has {len(lines)} lines'


def test_benchmarks_stay_one_read_of_at_most_250_lines():
    """The current figures only; their history stays in git (it went to 252 lines once)."""
    lines = (REPO / 'BENCHMARKS.md').read_text().splitlines()
    assert len(lines) <= 250, f'BENCHMARKS.md has {len(lines)} lines'


def test_ci_runs_exactly_the_readmes_test_command():
    readme = (REPO / 'README.md').read_text()
    quick_start = readme.split('```bash\n', 1)[1].split('```', 1)[0].splitlines()
    test_command = quick_start[1].split('#', 1)[0].strip()
    ci_command = (REPO / '.ci' / 'run').read_text().strip().splitlines()[-1]
    assert test_command == ci_command, (test_command, ci_command)


def _github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation but ``-`` and ``_``
    dropped, spaces as ``-``."""
    return re.sub(r'[^\w\- ]', '', heading.strip().lower()).replace(' ', '-')


def test_every_link_between_the_docs_reaches_a_file_and_heading():
    """Found in review: fidelity.md linked a heading of localization.md by a shorter anchor."""
    pages = [REPO / 'README.md', *sorted((REPO / 'docs').glob('*.md'))]
    anchors = {}
    for page in pages:
        seen: dict[str, int] = {}
        found = set()
        for heading in re.findall(r'^#+ (.+)$', page.read_text(), flags=re.MULTILINE):
            anchor = _github_anchor(heading)
            found.add(f'{anchor}-{seen[anchor]}' if anchor in seen else anchor)
            seen[anchor] = seen.get(anchor, 0) + 1
        anchors[page.resolve()] = found
    broken = []
    for page in pages:
        for target in re.findall(r'\]\(([^)\s]+)\)', page.read_text()):
            if re.match(r'[a-z]+:', target):
                continue  # a web address
            path, _, anchor = target.partition('#')
            linked = (page.parent / path).resolve() if path else page.resolve()
            if not linked.exists():
                broken.append(f'{page.name}: {target} (no such file)')
            elif anchor and linked.suffix == '.md' and anchor not in anchors.get(linked, ()):
                broken.append(f'{page.name}: {target} (no such heading)')
    assert not broken, broken
