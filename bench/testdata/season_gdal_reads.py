#!/usr/bin/python3
"""GDAL's side of BenchmarkSeason (bench/season_bench_test.go): the same windows of the same files,
read with /vsicurl/ by Debian's python3-gdal, with the same concurrency as stac-mcp's series (dates
side by side, each date's files side by side).

Input (stdin, JSON): {"dates": [[{"url": ..., "window": [x, y, w, h]}, ...], ...], "dates_at_once": 3}.
Output (stdout, JSON): {"seconds": wall time, "failed": reads that raised}. The GDAL settings come
from the environment the benchmark passes (GDAL_INGESTED_BYTES_AT_OPEN and the others it tunes).
"""
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from osgeo import gdal

gdal.UseExceptions()


def read(r):
    ds = gdal.Open("/vsicurl/" + r["url"])
    x, y, w, h = r["window"]
    ds.GetRasterBand(1).ReadRaster(x, y, w, h)
    return 0


def read_date(reads):
    failed = 0
    with ThreadPoolExecutor(max_workers=max(1, len(reads))) as pool:
        for f in [pool.submit(read, r) for r in reads]:
            try:
                f.result()
            except Exception:
                failed += 1
    return failed


def main():
    job = json.load(sys.stdin)
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=job["dates_at_once"]) as pool:
        failed = sum(pool.map(read_date, job["dates"]))
    json.dump({"seconds": time.monotonic() - start, "failed": failed}, sys.stdout)


main()
