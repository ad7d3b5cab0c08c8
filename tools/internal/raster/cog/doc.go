// Package cog reads Cloud-Optimized GeoTIFFs (and plain GeoTIFFs) through
// byte-range reads: a header read at open (one request for the first
// Options.HeaderBytes, more only when IFDs or offset arrays lie beyond),
// then the tiles or strips a pixel window needs, with adjacent ranges
// merged into one request, read side by side with bounded concurrency and
// cached by bytes across calls (Cache).
//
// Where the bytes come from is a Source: BytesSource for in-process files
// and tests, ReaderAtSource for local files (a local catalog's assets),
// HTTPSource for remote assets, which sends each range through a
// RangeFetcher. The tools give it *stacclient.Client (FetchRange), so that
// every range request passes the reliability layer like any asset fetch;
// this package does not import stacclient, so that it stays a decoder with
// no knowledge of catalogs.
//
// Supported (anything else is refused at Open with an error naming it):
// TIFF and BigTIFF, either byte order; tiles and strips; overviews
// (NewSubfileType 1); internal masks (type 4, 1- or 8-bit: Window.Valid is
// false where they are 0); compression none,
// deflate (8, 32946), LZW (5), zstd (50000) and JPEG (7, with JPEGTables,
// YCbCr converted to RGB as GDAL does); predictors 2 and 3; 8-, 16-, 32-
// and 64-bit samples as uint8, int8, uint16, int16, uint32, int32, float32
// and float64; PlanarConfiguration 1 (pixel) and 2 (band); GDAL_NODATA,
// GDAL_METADATA scale/offset, and the GeoTIFF keys and model transform.
//
// Input is untrusted: IFD counts, tag sizes, header bytes and tile byte
// counts are bounded, a decoded block may not be larger than its declared
// dimensions (decompressors read through a limit), and malformed input is
// an error, never a panic (FuzzOpenRead).
package cog
