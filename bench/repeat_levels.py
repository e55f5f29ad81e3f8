#!/usr/bin/env python3
"""Does the drift reference tell how fast the host ran? Within one calibration store, the kernels
the random networks measured alone more than once (in different networks, seconds to minutes apart; twice in one network counts once): each
measurement's log deviation from its kernel's mean, against the log deviation of the reference's
level at its time (the line between its campaign's readings either side, as
calibrate/drift_correction draws it). Slope 1 and a high correlation: the reference follows the
host and correcting by it helps; slope 0: its readings' changes are their own. Also the RMS of both
deviations: how far one kernel alone (of 50 µs or more) moves within a calibration, and how far the reference does.
No timing. Usage: bench/repeat_levels.py STORE.db [STORE.db ...]"""
import bisect
import collections
import datetime
import math
import sqlite3
import sys


def seconds(text):
    return datetime.datetime.fromisoformat(text.rstrip('Z')).replace(tzinfo=datetime.timezone.utc).timestamp()


def report(path):
    db = sqlite3.connect(f'file:{path}?mode=ro', uri=True)
    readings = collections.defaultdict(list)
    for campaign, time, p50 in db.execute('select campaign_id, time, p50 from reference_measurements'):
        readings[campaign].append((seconds(time), p50))
    for r in readings.values():
        r.sort()

    def level(campaign, t):
        r = readings.get(campaign)
        if not r:
            return None
        times = [x[0] for x in r]
        i = bisect.bisect_left(times, t)
        if i == 0:
            return r[0][1]
        if i == len(r):
            return r[-1][1]
        (t0, p0), (t1, p1) = r[i - 1], r[i]
        return p0 + (t - t0) / (t1 - t0) * (p1 - p0) if t1 > t0 else p0

    by_kernel = collections.defaultdict(list)
    seen = set()  # a kernel twice in one network is one measurement alone
    for kernel, campaign, graph, alone, time in db.execute(
            'select kernel_id, campaign_id, graph, alone_us, time from graph_layers where alone_us > 0'):
        at = level(campaign, seconds(time))
        if at and (kernel, campaign, graph) not in seen:
            seen.add((kernel, campaign, graph))
            by_kernel[kernel].append((math.log(alone), math.log(at)))
    xs, ys = [], []
    for rows in by_kernel.values():
        # Kernels of 50 µs and more: below, the run's fixed cost subtracted from each reading is
        # most of what moves.
        if len(rows) < 2 or sum(a for a, _ in rows) / len(rows) < math.log(50):
            continue
        mean_alone = sum(a for a, _ in rows) / len(rows)
        mean_level = sum(lv for _, lv in rows) / len(rows)
        for a, lv in rows:
            xs.append(lv - mean_level)
            ys.append(a - mean_alone)
    sxx = sum(x * x for x in xs)
    syy = sum(y * y for y in ys)
    if not xs or sxx == 0 or syy == 0:
        print(f'{path}: no kernel measured alone more than once with reference readings beside it')
        return
    sxy = sum(x * y for x, y in zip(xs, ys))
    n = len(xs)
    kernels = sum(len(r) > 1 and sum(a for a, _ in r) / len(r) >= math.log(50) for r in by_kernel.values())
    print(f'{path}: {n} measurements of {kernels} repeated kernels of ≥ 50 µs; '
          f'log alone on log reference level: slope {sxy / sxx:.2f}, correlation {sxy / math.sqrt(sxx * syy):.2f}; '
          f'RMS deviation alone {100 * math.sqrt(syy / n):.1f}%, reference {100 * math.sqrt(sxx / n):.1f}%')


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit('usage: bench/repeat_levels.py STORE.db [STORE.db ...]')
    for store in sys.argv[1:]:
        try:
            report(store)
        except (sqlite3.Error, ValueError) as e:
            print(f'error: {store}: {e}', file=sys.stderr)
            sys.exit(2)
