"""Run folders: one safe name component, earlier runs kept, --overwrite removes only run files."""

import json
import math
import re
import shutil
from pathlib import Path

import pytest

from wheelsim.report.plots import PAGE_NAMES
from wheelsim.run.output import (
    MARKER,
    OutputError,
    check_command_folder,
    check_run_name,
    command_folder,
    discard_unwritten,
    json_text,
    run_folder,
)


@pytest.mark.parametrize('name', ['', '.', '..', 'a/b', '../x', 'a\\b', 'tab\there', 'nul\0', 42,
                                  'a' * 201, 'é' * 101,
                                  # found in review: accepted as folder names
                                  ' ', 'run ', ' run', 'abc\u202edef', 'a\u2028b',
                                  'default\u200b', '\u2060', 'de\ufefffault',
                                  'default\u200d', '\u200c', '\u00ad', '\u200ddefault'])
def test_unsafe_names_are_refused(name):
    with pytest.raises(OutputError):
        check_run_name(name)


@pytest.mark.parametrize('name', ['default', 'my run', 'figure-eight_2', '..x', 'x..', 'ümlaut',
                                  'a' * 200,
                                  # found in review: zero-width joiners are parts of words
                                  'می\u200cخواهم', 'a\u200db', 'soft\u00adhyphen'])
def test_ordinary_names_are_accepted(name):
    assert check_run_name(name) == name


def test_an_existing_run_is_kept_and_the_next_run_numbered(tmp_path):
    first = run_folder(tmp_path, 'demo')
    (first / 'metrics.json').write_text('{}')
    (first / 'notes.txt').write_text('mine')
    second = run_folder(tmp_path, 'demo')
    third = run_folder(tmp_path, 'demo')
    assert (first.name, second.name, third.name) == ('demo', 'demo-2', 'demo-3')
    assert (first / 'notes.txt').read_text() == 'mine' and (first / 'metrics.json').exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ['demo', 'demo-2', 'demo-3']


def test_overwrite_removes_only_what_a_run_writes(tmp_path):
    """Found in review: a PNG of the user's in plots/ was removed too."""
    folder = run_folder(tmp_path, 'demo')
    for relative in ('metrics.json', 'timing.json', 'bag/bag_0.mcap', 'bag/metadata.yaml',
                     *(f'plots/{name}.png' for name in PAGE_NAMES), 'plots/report.pdf',
                     'plots/mine.txt', 'plots/my_figure.png', 'notes.txt'):
        (folder / relative).parent.mkdir(exist_ok=True)
        (folder / relative).write_text('x')
    again = run_folder(tmp_path, 'demo', overwrite=True)
    assert again == folder
    left = sorted(str(p.relative_to(folder)) for p in folder.rglob('*'))
    assert left == [MARKER, 'notes.txt', 'plots', 'plots/mine.txt', 'plots/my_figure.png']


def test_overwrite_refuses_a_file_of_the_user_s_in_the_bag_folder(tmp_path):
    """--overwrite refuses a run folder with a file of the user's in bag/ (which the bag writer
    makes whole) and removes nothing: the earlier run's results stay."""
    folder = run_folder(tmp_path, 'demo')
    for relative in ('metrics.json', 'bag/bag_0.mcap', 'bag/metadata.yaml', 'bag/notes.txt'):
        (folder / relative).parent.mkdir(exist_ok=True)
        (folder / relative).write_text('x')
    with pytest.raises(OutputError, match=r'demo/bag/notes.txt: a run makes bag/ whole and does '
                                          'not write this: not overwriting'):
        run_folder(tmp_path, 'demo', overwrite=True)
    left = sorted(str(p.relative_to(folder)) for p in folder.rglob('*'))
    assert left == [MARKER, 'bag', 'bag/bag_0.mcap', 'bag/metadata.yaml', 'bag/notes.txt',
                    'metrics.json']


@pytest.mark.parametrize(('relative', 'kinds'), [
    ('bag', 'a file where a run writes a folder'), ('plots', 'a file where a run writes a folder'),
    ('metrics.json/', 'a folder where a run writes a file'),
    ('bag/bag_0.mcap/', 'a folder where a run writes a file')])
def test_overwrite_refuses_a_file_where_a_folder_goes_and_removes_nothing(tmp_path, relative,
                                                                          kinds):
    """Found in review: with bag/ a file, --overwrite removed the earlier metrics, ran the
    whole scenario and then failed (FileExistsError, exit 1); with plots/ a file or
    metrics.json a folder, it failed after the run (exit 3)."""
    folder = run_folder(tmp_path, 'demo')
    (folder / 'timing.json').write_text('earlier')
    if relative.endswith('/'):
        (folder / relative).mkdir(parents=True)
    else:
        (folder / relative).write_text('x')
    with pytest.raises(OutputError, match=f'demo/{relative.rstrip("/")} is {kinds}: not '
                                          'overwriting; move it or choose another --output'):
        run_folder(tmp_path, 'demo', overwrite=True)
    assert (folder / 'timing.json').read_text() == 'earlier'


@pytest.mark.parametrize('command', ['tune', 'sweep'])
def test_overwrite_refuses_a_tune_or_sweep_folder_where_a_run_writes_and_removes_nothing(
        tmp_path, command):
    """Found in review: ``wheelsim tune --study plots`` into a run's folder, then ``wheelsim run
    --overwrite``: the run's figures went into the study's folder (the other order is refused by
    the tune)."""
    folder = run_folder(tmp_path, 'demo')
    (folder / 'timing.json').write_text('earlier')
    command_folder(folder / 'plots', command)
    (folder / 'plots' / 'history.png').write_text('theirs')
    with pytest.raises(OutputError, match=f'demo/plots is a wheelsim {command} folder '
                                          rf'\(.wheelsim-{command}\), where a run writes its '
                                          'plots: not writing into it'):
        run_folder(tmp_path, 'demo', overwrite=True)
    assert (folder / 'timing.json').read_text() == 'earlier'
    assert run_folder(tmp_path, 'demo', overwrite=True, writes=('bag',)) == folder


def test_overwrite_leaves_alone_what_is_where_this_run_writes_nothing(tmp_path):
    """Found in review: a run without plots nor bag was refused for a file named plots or bag,
    where it writes nothing."""
    folder = run_folder(tmp_path, 'demo')
    (folder / 'bag').write_text('mine')
    (folder / 'plots').mkdir()
    (folder / 'plots' / 'report.pdf').mkdir()
    assert run_folder(tmp_path, 'demo', overwrite=True, writes=()) == folder
    assert (folder / 'bag').read_text() == 'mine' and (folder / 'plots' / 'report.pdf').is_dir()
    (folder / 'bag').unlink()  # found in review: a link there, a file of the user's in bag/
    (folder / 'bag').symlink_to(tmp_path)
    assert run_folder(tmp_path, 'demo', overwrite=True, writes=()) == folder
    (folder / 'bag').unlink()
    (folder / 'bag').mkdir()
    (folder / 'bag' / 'notes.txt').write_text('mine')
    assert run_folder(tmp_path, 'demo', overwrite=True, writes=()) == folder
    assert (folder / 'bag' / 'notes.txt').read_text() == 'mine'
    with pytest.raises(OutputError, match='report.pdf is a folder where a run writes a file'):
        run_folder(tmp_path, 'demo', overwrite=True, writes=('plots',))


def test_overwrite_refuses_a_folder_no_run_wrote(tmp_path):
    (tmp_path / 'demo').mkdir()
    (tmp_path / 'demo' / 'thesis.tex').write_text('years of work')
    with pytest.raises(OutputError, match='not written by wheelsim run'):
        run_folder(tmp_path, 'demo', overwrite=True)
    assert (tmp_path / 'demo' / 'thesis.tex').read_text() == 'years of work'


def test_a_symlinked_run_folder_is_neither_followed_nor_overwritten(tmp_path):
    elsewhere = tmp_path / 'elsewhere'
    elsewhere.mkdir()
    (elsewhere / 'metrics.json').write_text('keep')
    (elsewhere / MARKER).write_text('')
    root = tmp_path / 'out'
    root.mkdir()
    (root / 'demo').symlink_to(elsewhere)
    with pytest.raises(OutputError, match='not a plain folder'):
        run_folder(root, 'demo', overwrite=True)
    assert run_folder(root, 'demo').name == 'demo-2'
    assert (elsewhere / 'metrics.json').read_text() == 'keep'


@pytest.mark.parametrize('link, target', [
    ('metrics.json', 'file.json'), ('timing.json', 'missing.json'),  # a broken link too
    (MARKER, 'file.json'), ('plots', 'folder'), ('bag', 'folder'),
    (f'plots/{PAGE_NAMES[0]}.png', 'file.json'),
    ('bag/metadata.yaml', 'missing.yaml')])
def test_overwrite_refuses_a_symbolic_link_where_a_run_writes(tmp_path, link, target):
    """--overwrite refuses a run folder with a symbolic link (to a file or a folder, or a broken
    one) where a run writes, and removes nothing: a run never writes through a link to outside
    its folder."""
    victim = tmp_path / 'victim'
    (victim / 'folder').mkdir(parents=True)
    (victim / 'file.json').write_text('precious')
    folder = run_folder(tmp_path / 'out', 'demo')
    (folder / 'plots').mkdir()
    (folder / 'bag').mkdir()
    (folder / 'plots' / 'mine.txt').write_text('x')
    (folder / 'bag' / 'mine.txt').write_text('x')
    if (folder / link).is_dir():
        shutil.rmtree(folder / link)
    (folder / link).unlink(missing_ok=True)
    (folder / link).symlink_to(victim / target)
    with pytest.raises(OutputError, match=f'{link} is a symbolic link where a run writes'):
        run_folder(tmp_path / 'out', 'demo', overwrite=True)
    assert (victim / 'file.json').read_text() == 'precious'
    assert sorted(p.name for p in (victim / 'folder').iterdir()) == []
    assert (folder / link).is_symlink()  # nothing removed either


def test_a_missing_output_root_is_created(tmp_path):
    folder = run_folder(tmp_path / 'sweep' / '000', 'short')
    assert folder == (tmp_path / 'sweep' / '000' / 'short').resolve()
    assert (folder / MARKER).is_file()


@pytest.mark.parametrize('make', [lambda root: run_folder(root, 'eight'),
                                  lambda root: command_folder(root / 'eight' / 'sweep', 'sweep')])
def test_a_folder_that_cannot_be_made_is_bad_input_naming_it(tmp_path, monkeypatch, make):
    """Found in review: ``--output`` a folder the user may not write in (here: mkdir refused)
    ended as a failed write, exit 3, ``[Errno 13] Permission denied: '...'``, where an
    ``--output`` that cannot be created is exit 2 naming it."""
    root = tmp_path.resolve()
    real_mkdir = Path.mkdir

    def refused(self, *args, **kwargs):
        if root in self.parents:  # the root exists: nothing may be made inside it
            raise PermissionError(13, 'Permission denied', str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, 'mkdir', refused)
    with pytest.raises(OutputError, match=r'/eight(/sweep)?: cannot create it \(Permission '
                       r'denied\): choose another --output$'):
        make(root)
    assert list(tmp_path.iterdir()) == []


def test_json_text_is_strict_json_a_non_finite_number_null():
    """json_text, which writes every JSON file of a run (a sweep's point.json too), writes a
    non-finite number as null: strict readers (jq, JavaScript's JSON.parse) refuse NaN."""
    document = {'b': [1.0, math.nan, (math.inf, {'c': -math.inf})], 'a': None, 'd': 2,
                'e': 'nan', 'f': 1e-300}
    text = json_text(document)
    assert json.loads(text, parse_constant=pytest.fail) == {
        'a': None, 'b': [1.0, None, [None, {'c': None}]], 'd': 2, 'e': 'nan', 'f': 1e-300}
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + '\n'


def test_a_sweep_or_tune_folder_is_its_own_or_new_never_a_user_s(tmp_path):
    """Found in review: a sweep replaced the user's sweep.csv, a tune their best_params.yaml,
    in a folder neither had made."""
    made = command_folder(tmp_path / 'base' / 'sweep', 'sweep')
    assert (made / '.wheelsim-sweep').is_file()
    (made / 'sweep.csv').write_text('its own table\n')
    assert command_folder(made, 'sweep') == made  # a rerun resumes there
    users = tmp_path / 'base' / 'tune'
    users.mkdir()
    (users / 'best_params.yaml').write_text('precious\n')
    with pytest.raises(OutputError, match=r'tune was not written by wheelsim tune \(no '
                                          r'\.wheelsim-tune\): not replacing its files'):
        command_folder(users, 'tune')
    assert (users / 'best_params.yaml').read_text() == 'precious\n'
    with pytest.raises(OutputError, match=r'sweep was made by wheelsim sweep \(no '
                                          r'\.wheelsim-tune\)'):
        command_folder(made, 'tune')  # a sweep's folder is not a tune's
    (users / 'runs').mkdir()  # a user's runs/ does not make it a tune's (found in review)
    with pytest.raises(OutputError, match='not written by wheelsim tune'):
        command_folder(users, 'tune')
    older = tmp_path / 'older'
    (older / 'runs').mkdir(parents=True)
    (older / 'study.db').write_text('')  # a tune's folder made before the marker: resumed
    assert (command_folder(older, 'tune') / '.wheelsim-tune').is_file()
    (tmp_path / 'a_file').write_text('x')
    with pytest.raises(OutputError, match='is not a plain folder'):
        check_command_folder(tmp_path / 'a_file', 'sweep')
    # found in review: OUTPUT/<name> a file failed once Ray ran (exit 3)
    with pytest.raises(OutputError, match=r'a_file is a file, where the sweep needs a folder: '
                                          'choose another --output or scenario name'):
        check_command_folder(tmp_path / 'a_file' / 'sweep', 'sweep')
    check_command_folder(tmp_path / 'new', 'sweep')  # a check makes nothing
    assert not (tmp_path / 'new').exists()


# found in review: two sweeps (or tunes) into one folder at once both ran; one failed part way
# through its report (exit 3), another's files under it
def test_a_folder_another_process_writes_is_refused_until_it_ends(tmp_path):
    import subprocess
    import sys

    folder = tmp_path / 'o' / 'sweep'
    holder = subprocess.Popen(
        [sys.executable, '-c', 'import sys; from wheelsim.run.output import command_folder; '
         f'command_folder({str(folder)!r}, "sweep"); print("held", flush=True); sys.stdin.read()'],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == 'held\n'
        with pytest.raises(OutputError, match=f'^{re.escape(str(folder))} is being written by '
                                              'another wheelsim sweep: wait for it to end, or '
                                              'choose another --output$'):
            command_folder(folder, 'sweep')
    finally:
        holder.communicate('', timeout=30)
    assert command_folder(folder, 'sweep') == folder
    assert command_folder(folder, 'sweep') == folder  # again in this process: its own lock


def test_overwrite_refuses_to_remove_a_file_the_run_reads_and_removes_nothing(tmp_path):
    """Found in review: a scenario saved as the run folder's metrics.json was replaced."""
    folder = run_folder(tmp_path, 'demo')
    (folder / 'timing.json').write_text('x')
    scenario = folder / 'metrics.json'
    scenario.write_text('name: demo\n')
    with pytest.raises(OutputError, match=rf'^{re.escape(str(scenario))} is read by this run'):
        run_folder(tmp_path, 'demo', overwrite=True, inputs=[tmp_path / 'demo' / '.' /
                                                             'metrics.json'])
    assert scenario.read_text() == 'name: demo\n' and (folder / 'timing.json').is_file()


def test_a_run_folder_with_nothing_written_is_discarded_one_with_a_user_file_kept(tmp_path):
    folder = run_folder(tmp_path, 'demo')
    discard_unwritten(folder)
    assert not folder.exists()
    folder = run_folder(tmp_path, 'demo')
    (folder / 'notes.txt').write_text('mine')
    again = run_folder(tmp_path, 'demo', overwrite=True)
    discard_unwritten(again)
    assert sorted(p.name for p in again.iterdir()) == [MARKER, 'notes.txt']
