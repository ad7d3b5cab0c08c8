#!/usr/bin/python3
"""Writes the season fixtures (../../season_test.go) with GDAL, and their reference with GDAL and numpy.

A synthetic year of Sentinel-2 L2A acquisitions over two adjacent tiles, laid out as Earth Search
serves them (one COG per band, harmonised numbers DN = reflectance x 10000, nodata 0, 10 m red and
nir, 20 m SCL; earthsearch:boa_offset_applied true in the items):

  year/  tiles A (x 478000-478400) and C (x 478320-478720) of UTM zone 13N (EPSG:32613), 40 x 40 px
         at 10 m, y 4437600-4438000, overlapping by 80 m as MGRS tiles overlap, on the same 10 m
         lattice. Twelve dates (the 15th of each month of 2023), both tiles each date but for
         2023-04-15 (tile A only). Fields of 8 x 8 px greening and browning with the season (each
         field its own amplitude), a water strip (rows 34-39). Tile C's red is 0.003 higher and its
         nir 0.003 lower than A's (a different pass over the overlap would differ), so the mosaic's
         choice of tile shows in its values. Clouds (SCL 9) and their shadows (SCL 3) wander from date
         to date; on 2023-03-15 a cloud sits on tile A in the overlap, where C is clear; on
         2023-06-15 tile A has a swath-edge corner of nodata (DN 0, SCL 0).
  zone/  one date (2023-07-15), tile W in UTM 13N (EPSG:32613) and tile E in UTM 14N (EPSG:32614),
         40 x 40 px at 10 m each, overlapping across the zone boundary (102 deg W) at 40 deg N.

items.json: the items, one JSON document a line (collection sentinel-2-l2a, platform, datetime, assets red, nir, scl with
eo:bands and raster:bands as Earth Search's; hrefs relative to this directory). aoi.json: the areas
(lon/lat polygons): "year" across both tiles, "zone" across the boundary.

The reference (expected.json and expected.bin.gz): each tile warped onto the target grid with
gdalwarp -r near -et 0 (the lattice of the first tile's 10 m band, the area's extent snapped to it:
what PlanTarget chooses, checked by the test), the area's pixels rasterised with gdal_rasterize,
and numpy for the rest:
  - per date, the mosaic's NDVI (NaN where no tile shows the pixel clear) and which tile each
    pixel came from (the clearest tile showing it clear: clear share of the area, then item id);
  - composites: NDVI nanmedian over all dates and over 2023-06/2023-08; red and nir nanmedian over
    2023-06/2023-08; clear observations per pixel;
  - the NDVI change from the 2023-01/2023-03 composite to the 2023-06/2023-08 composite, and from
    2023-03-15 to 2023-07-15, with the pixels clear on one side only counted.
expected.bin.gz holds float32 arrays (little-endian, row-major), their names, offsets and shapes in
expected.json.

Run from this directory with Debian's python3-gdal: /usr/bin/python3 make.py. The outputs are
committed; rerun only to change the scenes. CC0-1.0 (this project's own work).
"""
import gzip
import json
import math
import os
import shutil
import subprocess

import numpy as np
from osgeo import gdal, ogr, osr

gdal.UseExceptions()
N = 40
RES = 10
MASKED = [0, 1, 3, 8, 9, 10]
DATES = [f"2023-{m:02d}-15" for m in range(1, 13)]
SEVERITY = {5: 1, 4: 2, 6: 3, 3: 4, 0: 5, 8: 6, 9: 7}


def unit(a, b, c):
    h = (a * 73856093) ^ (b * 19349663) ^ (c * 83492791)
    h &= 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0x5BD1E995) & 0xFFFFFFFF
    h ^= h >> 15
    return h / float(1 << 31) - 1


def season(date):
    doy = (np.datetime64(date) - np.datetime64("2023-01-01")).astype(int)
    return 0.5 - 0.5 * math.cos(2 * math.pi * (doy - 15) / 365)


def scene(date, X0, di, tile_bias, cloud, nodata_corner):
    """Reflectance (red, nir) and the 10 m classes of one tile on one date. X0 is the tile's first
    column in the lattice of the year scene's tile A (fields follow the ground)."""
    s = season(date)
    red = np.zeros((N, N))
    nir = np.zeros((N, N))
    cls = np.zeros((N, N), dtype=int)
    for y in range(N):
        for x in range(N):
            X = X0 + x
            if y >= 34:
                r, n, c = 0.03, 0.01, 6
            else:
                amp = 0.5 + 0.5 * (unit(X // 8, y // 8, 3) + 1) / 2
                r = 0.09 - 0.05 * s * amp
                n = 0.18 + 0.30 * s * amp
                c = 4 if (n - r) / (n + r) > 0.4 else 5
            r += tile_bias
            n -= tile_bias
            red[y, x], nir[y, x], cls[y, x] = r, n, c
    if cloud is not None:
        cx, cy = cloud
        yy, xx = np.mgrid[0:N, 0:N]
        shadow = (xx + X0 - cx + 4) ** 2 + (yy - cy - 6) ** 2 < 20
        red[shadow] *= 0.4
        nir[shadow] *= 0.4
        cls[shadow] = 3
        c = (xx + X0 - cx) ** 2 + (yy - cy) ** 2 < 25
        red[c], nir[c], cls[c] = 0.40, 0.42, 9
    valid = np.ones((N, N), dtype=bool)
    if nodata_corner:
        yy, xx = np.mgrid[0:N, 0:N]
        valid = xx + yy >= 12
        cls[~valid] = 0
    return red, nir, cls, valid


def write(path, data, res, x0, y0, epsg, dtype, nodata):
    n = data.shape[0]
    mem = gdal.GetDriverByName("MEM").Create("", n, n, 1, dtype)
    mem.SetGeoTransform((x0, res, 0, y0, 0, -res))
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(epsg)
    mem.SetProjection(srs.ExportToWkt())
    band = mem.GetRasterBand(1)
    if nodata is not None:
        band.SetNoDataValue(nodata)
    band.WriteArray(data)
    gdal.Translate(path, mem, format="COG", creationOptions=["COMPRESS=DEFLATE", "PREDICTOR=2", "BLOCKSIZE=16", "OVERVIEWS=AUTO",
                                                              "OVERVIEW_RESAMPLING=" + ("NEAREST" if dtype == gdal.GDT_Byte else "AVERAGE")])
    assert (gdal.Open(path).ReadAsArray() == data).all(), path


def write_tile(dirname, name, x0, y0, epsg, red, nir, cls, valid):
    os.makedirs(dirname, exist_ok=True)
    dn = lambda r: np.where(valid, np.clip(np.round(r * 10000), 1, 65535), 0).astype(np.uint16)
    write(f"{dirname}/{name}_B04.tif", dn(red), RES, x0, y0, epsg, gdal.GDT_UInt16, 0)
    write(f"{dirname}/{name}_B08.tif", dn(nir), RES, x0, y0, epsg, gdal.GDT_UInt16, 0)
    scl = np.zeros((N // 2, N // 2), dtype=np.uint8)
    for j in range(N // 2):
        for i in range(N // 2):
            block = cls[2 * j:2 * j + 2, 2 * i:2 * i + 2].ravel()
            scl[j, i] = max(block, key=lambda v: SEVERITY[int(v)])
    write(f"{dirname}/{name}_SCL.tif", scl, 2 * RES, x0, y0, epsg, gdal.GDT_Byte, None)


def lonlat(epsg, pts):
    src = osr.SpatialReference()
    src.ImportFromEPSG(epsg)
    dst = osr.SpatialReference()
    dst.ImportFromEPSG(4326)
    dst.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    src.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    tr = osr.CoordinateTransformation(src, dst)
    return [list(tr.TransformPoint(x, y)[:2]) for x, y in pts]


def utm(epsg, lon, lat):
    src = osr.SpatialReference()
    src.ImportFromEPSG(4326)
    src.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    dst = osr.SpatialReference()
    dst.ImportFromEPSG(epsg)
    dst.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    return osr.CoordinateTransformation(src, dst).TransformPoint(lon, lat)[:2]


def item(iid, date, platform, prefix, bbox_pts):
    lons = [p[0] for p in bbox_pts]
    lats = [p[1] for p in bbox_pts]
    band = lambda f, common: {"href": f"{prefix}_{f}.tif", "type": "image/tiff; application=geotiff; profile=cloud-optimized", "roles": ["data"],
                              "eo:bands": [{"name": f, "common_name": common}],
                              "raster:bands": [{"nodata": 0, "data_type": "uint16", "scale": 0.0001, "offset": -0.1}]}
    return {"type": "Feature", "stac_version": "1.0.0", "id": iid, "collection": "sentinel-2-l2a",
            "geometry": {"type": "Polygon", "coordinates": [bbox_pts + [bbox_pts[0]]]}, "bbox": [min(lons), min(lats), max(lons), max(lats)],
            "properties": {"datetime": date + "T17:50:00Z", "platform": platform, "earthsearch:boa_offset_applied": True,
                           "s2:processing_baseline": "05.09", "eo:cloud_cover": 10},
            "links": [], "assets": {"red": band("B04", "red"), "nir": band("B08", "nir"),
                                    "scl": {"href": f"{prefix}_SCL.tif", "type": "image/tiff; application=geotiff; profile=cloud-optimized", "roles": ["data"],
                                            "raster:bands": [{"nodata": 0, "data_type": "uint8"}]}}}


def target(x0, y0, epsg, aoi_utm):
    """The year/zone target: the lattice of a 10 m file at (x0, y0), the area's extent snapped to it."""
    xs = [p[0] for p in aoi_utm]
    ys = [p[1] for p in aoi_utm]
    c0, c1 = math.floor((min(xs) - x0) / RES), math.ceil((max(xs) - x0) / RES)
    r0, r1 = math.floor((y0 - max(ys)) / RES), math.ceil((y0 - min(ys)) / RES)
    return {"epsg": epsg, "gt": [x0 + c0 * RES, RES, 0, y0 - r0 * RES, 0, -RES], "width": c1 - c0, "height": r1 - r0}


def warp(src, t, tmp):
    gt = t["gt"]
    out = os.path.join(tmp, os.path.basename(src) + ".warp.tif")
    gdal.Warp(out, src, format="GTiff", dstSRS=f"EPSG:{t['epsg']}", resampleAlg="near", errorThreshold=0,
              outputBounds=(gt[0], gt[3] - t["height"] * RES, gt[0] + t["width"] * RES, gt[3]), xRes=RES, yRes=RES,
              dstNodata=0, outputType=gdal.GDT_UInt16)
    return gdal.Open(out).ReadAsArray()


def rasterize(t, ring, tmp):
    mem = gdal.GetDriverByName("MEM").Create("", t["width"], t["height"], 1, gdal.GDT_Byte)
    mem.SetGeoTransform(t["gt"])
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(t["epsg"])
    mem.SetProjection(srs.ExportToWkt())
    path = os.path.join(tmp, "aoi.geojson")
    with open(path, "w") as f:
        json.dump({"type": "FeatureCollection", "crs": {"type": "name", "properties": {"name": "urn:ogc:def:crs:OGC:1.3:CRS84"}},
                   "features": [{"type": "Feature", "properties": {}, "geometry": {"type": "Polygon", "coordinates": [ring]}}]}, f)
    ds = ogr.Open(path)
    gdal.RasterizeLayer(mem, [1], ds.GetLayer(0), burn_values=[1])
    return mem.ReadAsArray().astype(bool)


def mosaic(tiles, t, inside, tmp):
    """tiles: [(id, prefix)] in id order. The mosaic's red, nir (NaN: no value), kept, source."""
    reads = []
    aoi = inside.sum()
    for iid, prefix in tiles:
        red = warp(prefix + "_B04.tif", t, tmp).astype(float)
        nir = warp(prefix + "_B08.tif", t, tmp).astype(float)
        scl = warp(prefix + "_SCL.tif", t, tmp)
        value = (red > 0) & (nir > 0) & inside
        # The SCL file's reach (a pixel of the grid whose centre falls on the file) is where its class
        # counts; outside it the tile has no value anyway (the bands cover the same extent).
        clear = value & ~np.isin(scl, MASKED)
        reads.append({"id": iid, "red": np.where(value, red / 10000, np.nan), "nir": np.where(value, nir / 10000, np.nan),
                      "value": value, "clear": clear, "share": clear.sum() / aoi})
    h, w = inside.shape
    red = np.full((h, w), np.nan)
    nir = np.full((h, w), np.nan)
    kept = np.zeros((h, w), dtype=bool)
    source = np.full((h, w), -1, dtype=np.int8)
    for y in range(h):
        for x in range(w):
            best = None
            for k, r in enumerate(reads):
                if not r["value"][y, x]:
                    continue
                rank = (r["clear"][y, x], r["share"], -k)
                if best is None or rank > best[0]:
                    best = (rank, k)
            if best is None:
                continue
            k = best[1]
            red[y, x], nir[y, x] = reads[k]["red"][y, x], reads[k]["nir"][y, x]
            kept[y, x] = reads[k]["clear"][y, x]
            source[y, x] = k
    return red, nir, kept, source, [r["share"] for r in reads]


def ndvi(red, nir, kept):
    return np.where(kept, (nir - red) / (nir + red), np.nan)


def main():
    for d in ("year", "zone"):
        shutil.rmtree(d, ignore_errors=True)
    tmp = "tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    items, arrays, expected = [], [], {}

    def add(name, a):
        a = np.asarray(a, dtype=np.float32)
        off = sum(x.size for _, x in arrays)
        arrays.append((name, a))
        expected.setdefault("arrays", {})[name] = {"offset": off, "shape": list(a.shape)}

    # The year scene.
    X0A, X0C, Y0 = 478000, 478320, 4438000
    clouds = {0: (10, 8), 1: (60, 12), 2: (36, 20), 3: (20, 25), 4: (50, 6), 5: (28, 14), 6: (66, 28),
              7: (12, 22), 8: (44, 10), 9: (30, 30), 10: (58, 18), 11: (8, 10)}
    for di, date in enumerate(DATES):
        platform = "sentinel-2a" if di % 2 == 0 else "sentinel-2b"
        for name, X0 in (("A", X0A), ("C", X0C)):
            if name == "C" and date == "2023-04-15":
                continue
            cloud = clouds[di]
            # 2023-03-15: the cloud is on tile A only (in the overlap); C is clear there.
            if di == 2 and name == "C":
                cloud = None
            red, nir, cls, valid = scene(date, (X0 - X0A) // RES, di, 0.003 if name == "C" else 0, cloud, name == "A" and date == "2023-06-15")
            prefix = f"year/{name}_{date.replace('-', '')}"
            write_tile("year", f"{name}_{date.replace('-', '')}", X0, Y0, 32613, red, nir, cls, valid)
            corners = lonlat(32613, [(X0, Y0 - N * RES), (X0 + N * RES, Y0 - N * RES), (X0 + N * RES, Y0), (X0, Y0)])
            items.append(item(f"S2_{name}_{date.replace('-', '')}", date, platform, prefix, corners))
    # The area: a UTM rectangle a third of a pixel off the lattice, as lon/lat corners.
    year_utm = [(X0A + 53.3, Y0 - 366.6), (X0A + 667.3, Y0 - 366.6), (X0A + 667.3, Y0 - 34.3), (X0A + 53.3, Y0 - 34.3)]
    year_ring = lonlat(32613, year_utm)
    year_ring.append(year_ring[0])
    ty = target(X0A, Y0, 32613, year_utm)
    inside = rasterize(ty, year_ring, tmp)
    expected["year"] = {"target": ty, "aoi_pixels": int(inside.sum()), "dates": []}
    add("year_inside", inside)
    per_date = {}
    for di, date in enumerate(DATES):
        tiles = [(f"S2_{n}_{date.replace('-', '')}", f"year/{n}_{date.replace('-', '')}") for n in ("A", "C")
                 if not (n == "C" and date == "2023-04-15")]
        red, nir, kept, source, shares = mosaic(tiles, ty, inside, tmp)
        v = ndvi(red, nir, kept)
        per_date[date] = (red, nir, kept, v)
        add(f"year_ndvi_{date}", v)
        add(f"year_source_{date}", source)
        vals = v[~np.isnan(v)]
        expected["year"]["dates"].append({"date": date, "items": [t[0] for t in tiles], "clear_shares": shares,
                                          "valid": int(vals.size), "mean": float(vals.mean()) if vals.size else None})

    def composite(dates, layer):
        stack = np.stack([layer(*per_date[d]) for d in dates])
        with np.errstate(all="ignore"):
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                med = np.nanmedian(stack, axis=0)
        count = (~np.isnan(stack)).sum(axis=0)
        return np.where(inside, med, np.nan), np.where(inside, count, 0)

    summer = ["2023-06-15", "2023-07-15", "2023-08-15"]
    winter = ["2023-01-15", "2023-02-15", "2023-03-15"]
    ndvi_all, count_all = composite(DATES, lambda r, n, k, v: v)
    ndvi_summer, count_summer = composite(summer, lambda r, n, k, v: v)
    ndvi_winter, _ = composite(winter, lambda r, n, k, v: v)
    red_summer, _ = composite(summer, lambda r, n, k, v: np.where(k, r, np.nan))
    nir_summer, _ = composite(summer, lambda r, n, k, v: np.where(k, n, np.nan))
    add("year_composite_ndvi_all", ndvi_all)
    add("year_composite_count_all", count_all)
    add("year_composite_ndvi_summer", ndvi_summer)
    add("year_composite_count_summer", count_summer)
    add("year_composite_ndvi_winter", ndvi_winter)
    for name, comp, count in (("composite_all", ndvi_all, count_all), ("composite_summer", ndvi_summer, count_summer)):
        v = comp[~np.isnan(comp)]
        obs = np.sort(count[inside])
        expected["year"][name] = {"valid": int(v.size), "mean": float(v.mean()), "observations": [int(obs[0]), int(np.median(obs)), int(obs[-1])]}
    add("year_composite_red_summer", red_summer)
    add("year_composite_nir_summer", nir_summer)

    def change(earlier, later):
        both = ~np.isnan(earlier) & ~np.isnan(later) & inside
        d = np.where(both, later - earlier, np.nan)
        e_only = (~np.isnan(earlier) & np.isnan(later) & inside).sum()
        l_only = (np.isnan(earlier) & ~np.isnan(later) & inside).sum()
        bounds = [-np.inf, -0.2, -0.1, 0.1, 0.2, np.inf]
        classes = [int(((d >= bounds[k]) & (d < bounds[k + 1]) & both).sum()) for k in range(5)]
        return d, {"both": int(both.sum()), "earlier_only": int(e_only), "later_only": int(l_only), "classes": classes,
                   "mean": float(np.nanmean(d))}

    d1, c1 = change(ndvi_winter, ndvi_summer)
    d2, c2 = change(per_date["2023-03-15"][3], per_date["2023-07-15"][3])
    add("year_change_winter_summer", d1)
    add("year_change_0315_0715", d2)
    expected["year"]["change_winter_summer"] = c1
    expected["year"]["change_0315_0715"] = c2

    # The zone scene: tiles either side of 102 deg W at 40 deg N.
    bx, by = utm(32613, -102.0, 40.0)
    wx0, wy0 = math.floor((bx + 100) / RES) * RES - N * RES, math.floor(by / RES) * RES + 200
    ex, ey = utm(32614, -102.0, 40.0)
    ex0, ey0 = math.floor((ex - 100) / RES) * RES, math.floor(ey / RES) * RES + 200
    date = "2023-07-15"
    for name, x0, y0, epsg in (("W", wx0, wy0, 32613), ("E", ex0, ey0, 32614)):
        red, nir, cls, valid = scene(date, 0 if name == "W" else 40, 6, 0.003 if name == "E" else 0, None, False)
        write_tile("zone", name, x0, y0, epsg, red, nir, cls, valid)
        corners = lonlat(epsg, [(x0, y0 - N * RES), (x0 + N * RES, y0 - N * RES), (x0 + N * RES, y0), (x0, y0)])
        items.append(item(f"S2_zone_{name}", date, "sentinel-2a", f"zone/{name}", corners))
    zone_ring = [[-102.0030, 39.99953], [-101.99705, 39.99953], [-101.99705, 40.00153], [-102.0030, 40.00153]]
    zone_utm = [utm(32613, lo, la) for lo, la in zone_ring]
    zone_ring.append(zone_ring[0])
    tz = target(wx0, wy0, 32613, zone_utm)
    zinside = rasterize(tz, zone_ring, tmp)
    red, nir, kept, source, shares = mosaic([("S2_zone_E", "zone/E"), ("S2_zone_W", "zone/W")], tz, zinside, tmp)
    add("zone_inside", zinside)
    add("zone_ndvi", ndvi(red, nir, kept))
    add("zone_source", source)
    expected["zone"] = {"target": tz, "aoi_pixels": int(zinside.sum()), "clear_shares": shares}

    with open("items.json", "w") as f:
        for it in items:
            f.write(json.dumps(it, separators=(",", ":")) + "\n")
    with open("aoi.json", "w") as f:
        json.dump({"year": {"type": "Polygon", "coordinates": [year_ring]}, "zone": {"type": "Polygon", "coordinates": [zone_ring]}}, f, indent=1)
        f.write("\n")
    with open("expected.json", "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")
    blob = b"".join(a.astype("<f4").tobytes() for _, a in arrays)
    with gzip.GzipFile("expected.bin.gz", "wb", mtime=0) as f:
        f.write(blob)
    shutil.rmtree(tmp)
    for root, _, files in os.walk("."):
        for x in files:
            if x.endswith(".aux.xml"):
                os.remove(os.path.join(root, x))


main()
