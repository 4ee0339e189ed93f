#!/usr/bin/env python3
"""`make coverage`: line coverage of rmm.h by the host tests, and of its error returns.

Builds every tests/test_*.c on the host backend with gcc --coverage at -O0, with and without
RMM_DEBUG (the threads_* and fuzz_* programs are left out: slow, and they add a line or two), runs
each, and merges gcov's counts for rmm.h over all of them (a line is covered if any build ran it).
Prints the executable lines covered, the error-return lines covered (lines that make a failure:
rmm__fail, RMM__INVALID, RMM__NULL_OUT, `return RMM_ERROR_`, rmm__reentrant, ...), the error checks
that ran with a branch never taken, and each uncovered error return under its function (gcov's
function_name). Lines of functions no build emits are not counted (RMM__PRIVATE ones no test
reaches; every public function is emitted). Needs gcc and gcov; not part of `make test`.
Environment: BUILD (default build; the builds go to $BUILD/coverage), CC (default gcc), GCOV
(default gcov), COVERAGE_JOBS (parallel builds and runs, default 1). Exit status 1 iff a test
failed or did not build."""
import collections
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
OUT = os.path.join(ROOT, os.environ.get('BUILD', 'build'), 'coverage')
CC = os.environ.get('CC', 'gcc')
GCOV = os.environ.get('GCOV', 'gcov')
VARIANTS = {'release': [], 'debug': ['-DRMM_DEBUG']}
ERROR = re.compile(r'rmm__fail(_cuda)?\(|RMM__INVALID\(|RMM__NULL_OUT\(|return RMM_ERROR_|rmm__null_upstream\(|'
                   r'rmm__reentrant\(|RMM__HOST_FAULT\(|RMM__HOST_NO_IPC\(|rmm_set_last_error\(|rmm__cuda_fail\(')


def build_and_run(job):
    variant, src = job
    name = os.path.splitext(os.path.basename(src))[0]
    d = os.path.join(OUT, variant, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    exe = os.path.join(d, name)
    b = subprocess.run([CC, '-std=c11', '-O0', '-g', '--coverage', '-DRMM_BACKEND_HOST', *VARIANTS[variant], '-I.', src, '-o', exe,
                        '-lpthread', '-lm'], cwd=ROOT, capture_output=True, text=True)
    if b.returncode != 0:
        return f'{variant}/{name}: did not build\n{b.stderr[-2000:]}', False
    env = dict(os.environ, RMM_DEBUG_LOG_FILE=os.path.join(d, 'debuglog'))
    r = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True, env=env)
    last = (r.stdout.strip().splitlines() or ['(no output)'])[-1]
    return f'{variant}/{name}: {last}', r.returncode == 0


def main():
    tests = sorted(glob.glob(os.path.join(ROOT, 'tests', 'test_*.c')))
    jobs = [(v, t) for v in VARIANTS for t in tests]
    ok = True
    with concurrent.futures.ThreadPoolExecutor(int(os.environ.get('COVERAGE_JOBS', '1'))) as ex:
        for line, good in ex.map(build_and_run, jobs):
            print(line)
            ok &= good
    count, func, branches = {}, {}, {}
    for gcda in sorted(glob.glob(os.path.join(OUT, '*', '*', '*.gcda'))):
        out = subprocess.run([GCOV, '-b', '--json-format', '-t', '-o', os.path.dirname(gcda), gcda], cwd=ROOT, capture_output=True,
                             text=True).stdout
        for text in out.splitlines():
            if not text.startswith('{'):
                continue
            for f in json.loads(text)['files']:
                if os.path.basename(f['file']) != 'rmm.h':
                    continue
                for l in f['lines']:
                    n = l['line_number']
                    count[n] = max(count.get(n, 0), l['count'])
                    func.setdefault(n, l.get('function_name', '?'))
                    b = [x['count'] for x in l.get('branches', [])]
                    if b:
                        old = branches.get(n)
                        branches[n] = b if old is None or len(old) != len(b) else [max(x, y) for x, y in zip(old, b)]
    if not count:
        print('no coverage data for rmm.h (is gcov the one of this gcc?)')
        return 1
    lines = open(os.path.join(ROOT, 'rmm.h')).read().split('\n')
    hit = sum(1 for c in count.values() if c)
    errors = [n for n in sorted(count) if ERROR.search(lines[n - 1])]
    uncovered = collections.OrderedDict()
    for n in errors:
        if not count[n]:
            uncovered.setdefault(func[n], []).append(n)
    partial = [n for n in errors if count[n] and 'if (' in lines[n - 1] and 0 in branches.get(n, [1])]
    print(f'\nrmm.h: {hit}/{len(count)} executable lines covered ({100 * hit / len(count):.1f}%)')
    covered = len(errors) - sum(len(v) for v in uncovered.values())
    print(f'error-return lines: {covered}/{len(errors)} covered ({100 * covered / len(errors):.1f}%)')
    print(f'error checks that ran with a branch never taken: {len(partial)}')
    for fn, ns in uncovered.items():
        print(f'  {fn}:')
        for n in ns:
            print(f'    rmm.h:{n}: {lines[n - 1].strip()[:140]}')
    if not ok:
        print('(a test failed or did not build: see above)')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
