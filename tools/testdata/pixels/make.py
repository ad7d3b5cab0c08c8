#!/usr/bin/env python3
"""Writes the pixel tools' test COGs (tools/pixels_test.go) with GDAL.

A synthetic Sentinel-2 L2A-like scene in UTM zone 13N (EPSG:32613), laid
out as Earth Search publishes L2A: one single-band uint16 COG per band,
deflate, 10 m bands (blue, green, red, nir) 64x64 px and 20 m ones (swir16,
swir22, SCL) 32x32 px, reflectance = DN x 0.0001 - 0.1 (processing baseline
04.00), nodata 0; 16x16 tiles so that the files have overviews.

  left half (x < 320 m): vegetation (red 0.05, nir 0.45)
  right half: bare soil (red 0.20, nir 0.30)
  rows 0-7 at 10 m (north edge, 80 m): nodata 0 in every 10 m band
  SCL: 4 vegetation / 5 bare soil, a cloud (9) at 20 m cols 4-7 rows 8-11,
       its shadow (3) at cols 8-11 rows 8-11, water (6) nowhere.

A Landsat Collection 2 Level-2-like scene over the same corner: 30 m
uint16 bands LC_RED and LC_NIR08 (reflectance = DN x 0.0000275 - 0.2,
nodata 0) and LC_QA_PIXEL, 24x24 px:
  left half vegetation (red 0.05, nir08 0.45), right half soil (0.20, 0.30)
  QA_PIXEL 21824 (clear land), row 0 fill (1), a cloud (22280, bit 3) at
  cols 2-5 rows 4-7, its shadow (23888, bit 4) at cols 6-9 rows 4-7.

Run from this directory: python3 make.py (needs gdal_translate). The
outputs are committed; rerun only to change the scene.
"""
import os
import subprocess

X0, Y0 = 478000, 4438000
DN = lambda refl: int(round((refl + 0.1) / 0.0001))


def band10(name, veg, soil):
    rows = []
    for j in range(64):
        row = []
        for i in range(64):
            if j < 8:
                row.append(0)
            else:
                row.append(DN(veg if i < 32 else soil))
        rows.append(row)
    return rows


def band20(veg, soil):
    return [[DN(veg if i < 16 else soil) for i in range(32)] for j in range(32)]


def scl():
    rows = []
    for j in range(32):
        row = []
        for i in range(32):
            v = 4 if i < 16 else 5
            if 8 <= j < 12 and 4 <= i < 8:
                v = 9
            if 8 <= j < 12 and 8 <= i < 12:
                v = 3
            row.append(v)
        rows.append(row)
    return rows


def landsat(veg, soil):
    dn = lambda r: int(round((r + 0.2) / 0.0000275))
    return [[0 if j == 0 else dn(veg if i < 12 else soil) for i in range(24)] for j in range(24)]


def qa_pixel():
    rows = []
    for j in range(24):
        row = []
        for i in range(24):
            v = 21824
            if j == 0:
                v = 1
            elif 4 <= j < 8 and 2 <= i < 6:
                v = 22280
            elif 4 <= j < 8 and 6 <= i < 10:
                v = 23888
            row.append(v)
        rows.append(row)
    return rows


def write(name, rows, res, nodata=True):
    n = len(rows)
    asc = name + ".asc"
    with open(asc, "w") as f:
        f.write(f"ncols {n}\nnrows {n}\nxllcorner {X0}\nyllcorner {Y0 - n * res}\ncellsize {res}\n")
        for r in rows:
            f.write(" ".join(str(v) for v in r) + "\n")
    args = ["gdal_translate", "-q", "-of", "COG", "-ot", "UInt16", "-a_srs", "EPSG:32613",
            "-co", "COMPRESS=DEFLATE", "-co", "BLOCKSIZE=16", "-co", "OVERVIEWS=AUTO"]
    if nodata:
        args += ["-a_nodata", "0"]
    subprocess.run(args + [asc, name + ".tif"], check=True)
    os.remove(asc)
    for aux in (name + ".tif.aux.xml", asc + ".aux.xml"):
        if os.path.exists(aux):
            os.remove(aux)


write("B02", band10("blue", 0.04, 0.15), 10)
write("B03", band10("green", 0.08, 0.18), 10)
write("B04", band10("red", 0.05, 0.20), 10)
write("B08", band10("nir", 0.45, 0.30), 10)
write("B11", band20(0.25, 0.35), 20)
write("B12", band20(0.12, 0.30), 20)
write("SCL", scl(), 20, nodata=False)
write("LC_RED", landsat(0.05, 0.20), 30)
write("LC_NIR08", landsat(0.45, 0.30), 30)
write("LC_QA_PIXEL", qa_pixel(), 30, nodata=False)
