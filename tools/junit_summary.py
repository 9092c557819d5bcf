"""Print one summary line over JUnit XML files, then one line per reason tests did not run and
one per file missing (a test process ended before it wrote its file: a test over its time limit,
wheelsim/testing/time_limit.py).

Exit 1 on failures, errors, missing files or when no test ran."""

import sys
import xml.etree.ElementTree as ET
from collections import Counter


def main(paths: list[str]) -> int:
    passed = failed = skipped = 0
    reasons: Counter[str] = Counter()
    unreadable = []
    for path in paths:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as err:
            unreadable.append(f'missing or unreadable test result {path}: {err}')
            continue
        suites = [root] if root.tag == 'testsuite' else root.findall('testsuite')
        for suite in suites:
            tests = int(suite.get('tests', 0))
            bad = int(suite.get('failures', 0)) + int(suite.get('errors', 0))
            skip = int(suite.get('skipped', 0))
            failed += bad
            skipped += skip
            passed += tests - bad - skip
            for case in suite.iter('testcase'):
                for element in case.findall('skipped'):
                    reasons[_reason(element.get('message', ''))] += 1
    print(f'{passed} passed, {failed} failed, {skipped} skipped')
    for reason, count in sorted(reasons.items(), key=lambda item: -item[1]):
        print(f'  {count} not run: {reason}')
    for line in unreadable:
        print(line)
    if unreadable:
        return 1
    if passed + failed == 0:
        print('no test ran')
        return 1
    return 1 if failed else 0


def _reason(message: str) -> str:
    """pytest's skip message without its ``Skipped: `` prefix, on one line."""
    text = message.removeprefix('Skipped: ').strip()
    return ' '.join(text.split()) or 'no reason given'


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
