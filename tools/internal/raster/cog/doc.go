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
// Input is untrusted, and so is the host: every cost is bounded before
// it is spent, and malformed input is an error, never a panic
// (FuzzOpenRead; the hostile layouts of hostile_test.go are in its seeds).
//
//   - The header. Open reads at most Options.MaxHeaderBytes (4 MiB) in at
//     most Options.MaxRequests requests, follows at most 64 IFDs, and
//     decodes at most Options.MaxHeaderDecodedBytes (4 MiB) from the tags'
//     values. A tag's values are read when it is used and no further than
//     its use needs: one value of a single-valued tag, the first tiepoint,
//     and of the block offsets and byte counts as many as the level has
//     blocks (libtiff's rule: a longer array is read up to them; a shorter
//     one is refused, where GDAL fails on the missing blocks). Those are
//     read in place from the header's bytes, never decoded ahead; typed
//     anything but SHORT, LONG or LONG8 (SLONG8 from some writers) they
//     are refused, as GDAL's on-demand loading refuses them.
//     Info.HeaderMemory is what the header holds (the cache charges it).
//   - Degenerate layouts. Tiles under 16 pixels a side (TIFF requires
//     multiples of 16) and strips of under 256 pixels are refused when the
//     level has more than one block that way; libtiff and GDAL read them
//     with a warning, at a request and a decode per few pixels.
//   - A read. ReadWindow checks, before it requests or allocates anything
//     in proportion to the window: MaxWindowValues (pixels × bands),
//     Options.MaxBlocks (16384 tiles or strips, the mask's included),
//     Options.MaxRequests (128 range requests, after merging) and the
//     call's RequestBudget, shared by the Opens and reads of one call;
//     a read past one is a *LimitError. WindowCost tells, from the header
//     alone, the blocks, requests, bytes and memory a read will take, so a
//     caller can charge them to its budgets first; FitLevel picks the
//     finest level whose window fits a pixel bound. A read checks its
//     context between blocks and starts no request once its call ended.
//   - Blocks. A block's compressed and decoded sizes are bounded by
//     MaxBlockBytes, and a decompressor reads through a limit (a block
//     larger than its declared dimensions is refused). The cache keeps a
//     copy of each block, never a window into a larger merged buffer.
//   - Errors never quote the file's bytes: an href may reach any service,
//     an internal one included ("not a TIFF: the file does not start with
//     a TIFF signature", not its first bytes).
package cog
