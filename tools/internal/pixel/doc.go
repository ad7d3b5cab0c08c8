// Package pixel is the engine of the pixel tools (aoi_statistics,
// render_aoi, index_time_series, export): it reads an item's bands over an
// area from Cloud-Optimized GeoTIFFs onto one grid and returns facts —
// values, validity, statistics, what was read and why — that the adapters
// in tools word. Nothing here writes text for a model.
//
// The steps, by file:
//
//   - bands.go: which asset and band fills a name (common name, asset key,
//     band name, a sensor's designation such as B08).
//   - open.go: opening the files through the reliability layer, their
//     headers cached and charged to the decode budget.
//   - read.go: planning one read (overview level, window, grid), charging
//     its memory before allocating, reading the bands side by side and
//     masking (nodata, alpha, the item's cloud mask).
//   - calibrate.go: DNs to reflectance by the catalogs' conventions (Earth
//     Search's boa_offset_applied, Sentinel-2 baseline 04.00, raster:bands,
//     Landsat Collection 2), checked against the pixels on every read.
//   - stats.go: statistics, percentiles and histograms of the valid pixels.
//   - acquisition.go, target.go, mosaic.go, composite.go, change.go: a
//     period read as acquisitions (one platform and UTC day) mosaicked onto
//     one grid, an interval's per-pixel median composite, and the change
//     between two periods (adr/0040, adr/0041).
//   - errors.go: the kinds of failure the adapters word.
package pixel
