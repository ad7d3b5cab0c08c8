#!/usr/bin/python3
"""Writes the calibration conventions' test COGs (../../calibrate_test.go) with GDAL.

One invented 320 m square in UTM zone 13N (EPSG:32613), 32 x 32 px of 10 m,
seen three ways, each as a catalog lays its numbers out:

  H_<band>.tif  Earth Search's harmonised Sentinel-2 L2A numbers: DN = reflectance x 10000
  R_<band>.tif  raw Sentinel-2 L2A numbers from processing baseline 04.00: DN = reflectance x 10000 + 1000
                (the Planetary Computer's, and Earth Search's Collection 1)
  L_<band>.tif  Landsat Collection 2 Level-2 surface reflectance: DN = (reflectance + 0.2) / 0.0000275

Bands B02 blue, B03 green, B04 red, B08 nir (uint16, nodata 0, DEFLATE, 16 px tiles, overviews);
SCL.tif (20 m, uint8) and L_QA_PIXEL.tif (10 m, uint16) the cloud masks; ND.tif a band whose
file says nodata 0 where 0 is data (columns 0-7), for a catalog's own nodata to replace;
SCL_FINE.tif and SCL_FINE_OVR.tif a cloud mask 20 times finer than the bands (0.5 m), without
overviews and with overviews at 1 m and 16 m only.

The landscape: vegetation (blue 0.05, green 0.09, red 0.08, nir 0.2192: NDVI 0.4652), a water
strip (columns 26-31: blue 0.06, green 0.05, red 0.03, nir 0.01), bare soil (rows 24-31, columns
0-11: 0.12, 0.15, 0.20, 0.30) and a cloud (rows 4-7, columns 4-7 at 10 m: 0.45 in every band; SCL
9, QA_PIXEL cloud).

expected.json holds the reference statistics: NDVI and band means over the clear pixels of the
whole square, computed with numpy from the reflectances written (GDAL reads the files back and
the script checks they hold what it meant to write).

Run from this directory with Debian's python3-gdal: /usr/bin/python3 make.py. The outputs are
committed; rerun only to change the scene.
"""
import json
import os

import numpy as np
from osgeo import gdal

gdal.UseExceptions()
N = 32
X0, Y0 = 478000, 4438000
BANDS = {"B02": 0, "B03": 1, "B04": 2, "B08": 3}
VEG = (0.05, 0.09, 0.08, 0.2192)
WATER = (0.06, 0.05, 0.03, 0.01)
SOIL = (0.12, 0.15, 0.20, 0.30)
CLOUD = (0.45, 0.45, 0.45, 0.45)


def classes():
    c = np.full((N, N), "veg", dtype=object)
    c[:, 26:] = "water"
    c[24:, :12] = "soil"
    c[4:8, 4:8] = "cloud"
    return c


def reflectance(band):
    k = BANDS[band]
    c = classes()
    out = np.zeros((N, N))
    for name, values in {"veg": VEG, "water": WATER, "soil": SOIL, "cloud": CLOUD}.items():
        out[c == name] = values[k]
    return out


def write(name, data, res, dtype, nodata):
    n = data.shape[0]
    mem = gdal.GetDriverByName("MEM").Create("", n, n, 1, dtype)
    mem.SetGeoTransform((X0, res, 0, Y0, 0, -res))
    mem.SetProjection("EPSG:32613")
    band = mem.GetRasterBand(1)
    if nodata is not None:
        band.SetNoDataValue(nodata)
    band.WriteArray(data)
    gdal.Translate(name, mem, format="COG", creationOptions=["COMPRESS=DEFLATE", "BLOCKSIZE=16", "OVERVIEWS=AUTO"])
    back = gdal.Open(name).ReadAsArray()
    assert (back == data).all(), name


for band in BANDS:
    r = reflectance(band)
    write(f"H_{band}.tif", np.round(r * 10000).astype(np.uint16), 10, gdal.GDT_UInt16, 0)
    write(f"R_{band}.tif", np.round(r * 10000 + 1000).astype(np.uint16), 10, gdal.GDT_UInt16, 0)
    write(f"L_{band}.tif", np.round((r + 0.2) / 0.0000275).astype(np.uint16), 10, gdal.GDT_UInt16, 0)

c = classes()
scl = np.full((N // 2, N // 2), 4, dtype=np.uint8)
for j in range(N // 2):
    for i in range(N // 2):
        block = c[2 * j:2 * j + 2, 2 * i:2 * i + 2]
        if (block == "cloud").any():
            scl[j, i] = 9
        elif (block == "water").all():
            scl[j, i] = 6
        elif (block == "soil").all():
            scl[j, i] = 5
write("SCL.tif", scl, 20, gdal.GDT_Byte, None)
# A band whose 0s are data (a height at sea level) while its file says
# nodata 0, as a file can when the catalog's raster:bands names another
# nodata: columns 0-7 are 0, the rest 100.
nd = np.full((N, N), 100, dtype=np.uint16)
nd[:, :8] = 0
write("ND.tif", nd, 10, gdal.GDT_UInt16, 0)
# A cloud mask 20 times finer than the bands (0.5 m), as a hostile or
# careless catalog may pair them: without overviews (SCL_FINE.tif), and
# with overviews at 1 m and 16 m only (SCL_FINE_OVR.tif).
fine = np.full((N * 20, N * 20), 4, dtype=np.uint8)
fine[80:160, 80:160] = 9
for name, levels in (("SCL_FINE.tif", []), ("SCL_FINE_OVR.tif", [2, 32])):
    mem = gdal.GetDriverByName("MEM").Create("", N * 20, N * 20, 1, gdal.GDT_Byte)
    mem.SetGeoTransform((X0, 0.5, 0, Y0, 0, -0.5))
    mem.SetProjection("EPSG:32613")
    mem.GetRasterBand(1).WriteArray(fine)
    if levels:
        mem.BuildOverviews("NEAREST", levels)
    gdal.Translate(name, mem, format="GTiff", creationOptions=["TILED=YES", "BLOCKXSIZE=256", "BLOCKYSIZE=256", "COMPRESS=DEFLATE", "COPY_SRC_OVERVIEWS=YES"])
qa = np.where(c == "cloud", 22280, np.where(c == "water", 21952, 21824)).astype(np.uint16)
write("L_QA_PIXEL.tif", qa, 10, gdal.GDT_UInt16, 1)

# The reference: clear pixels are those whose 20 m SCL class is not masked
# (the tools' nearest-neighbour lookup of the 20 m pixel under each 10 m centre).
sclNear = np.repeat(np.repeat(scl, 2, axis=0), 2, axis=1)
clear = ~np.isin(sclNear, [0, 1, 3, 8, 9, 10])
red, nir = reflectance("B04"), reflectance("B08")
ndvi = (nir - red) / (nir + red)
expected = {
    "clear_pixels": int(clear.sum()),
    "ndvi_mean": float(ndvi[clear].mean()),
    "ndvi_vegetation": float((0.2192 - 0.08) / (0.2192 + 0.08)),
    "band_means": {b: float(reflectance(b)[clear].mean()) for b in BANDS},
    "ndvi_mean_offset_on_harmonised": float(np.nanmean(((nir - 0.1) - (red - 0.1)) / ((nir - 0.1) + (red - 0.1)) * np.where(clear, 1, np.nan))),
    "ndvi_mean_raw_unshifted": float(np.nanmean(((nir + 0.1) - (red + 0.1)) / ((nir + 0.1) + (red + 0.1)) * np.where(clear, 1, np.nan))),
}
with open("expected.json", "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)
    f.write("\n")
for aux in [x for x in os.listdir(".") if x.endswith(".aux.xml")]:
    os.remove(aux)
