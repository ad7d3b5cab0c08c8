#!/bin/sh
# Writes the GeoTIFFs the cog tests read, with GDAL (gdal-bin) from
# deterministic patterns (pattern.py, Python 3 standard library only).
# Run from this directory: sh make.sh. GDAL 3.6.2 wrote the committed files.
# Each file is one layout the reader supports; the tests compare our window
# reads against gdal_translate -srcwin on these same files at test time.
set -eu
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
W=200 H=150

src() { # src NAME TYPE BANDS [NODATA] -> $tmp/NAME.bin (ENVI)
	python3 pattern.py "$tmp/$1.bin" "$2" "$W" "$H" "$3" ${4:-}
}
geo() { # georeferencing arguments: EPSG, then the upper-left corner and pixel size
	echo "-a_srs EPSG:$1 -a_ullr $2 $3 $(echo "$2 + $W * $4" | bc -l) $(echo "$3 - $H * $4" | bc -l)"
}
tr() { gdal_translate -q "$@"; }

# Sentinel-2 L2A / Landsat C2 style: UTM, uint16, deflate + predictor 2, COG with overviews, nodata 0, scale/offset.
src s2 uint16 1 0
tr -of COG -co COMPRESS=DEFLATE -co PREDICTOR=2 -co BLOCKSIZE=64 $(geo 32633 399960 5000040 10) \
	-a_nodata 0 -a_scale 0.0001 -a_offset -0.1 "$tmp/s2.bin" s2_u16_deflate_cog.tif
# NAIP style: 3-band uint8 JPEG (YCbCr), COG with overviews.
src naip uint8 3
tr -of COG -co COMPRESS=JPEG -co QUALITY=90 -co BLOCKSIZE=64 $(geo 26910 500000 4200000 0.6) "$tmp/naip.bin" naip_u8_jpeg_ycbcr_cog.tif
# DEM: float32, LZW + floating-point predictor, geographic, nodata -9999.
src dem float32 1 -9999
tr -of COG -co COMPRESS=LZW -co PREDICTOR=YES -co BLOCKSIZE=64 $(geo 4326 10.0 47.0 0.0003) -a_nodata -9999 "$tmp/dem.bin" dem_f32_lzw_pred3_cog.tif
# Strips, uncompressed, pixel-interleaved, a short last strip (150 = 21*7 + 3).
src rgb uint8 3
tr -co TILED=NO -co BLOCKYSIZE=7 -co INTERLEAVE=PIXEL $(geo 32618 600000 4500000 30) "$tmp/rgb.bin" u8_none_strips_pixel.tif
# Strips, LZW + predictor 2, band-interleaved, big-endian.
tr -co TILED=NO -co BLOCKYSIZE=16 -co INTERLEAVE=BAND -co COMPRESS=LZW -co PREDICTOR=2 -co ENDIANNESS=BIG \
	$(geo 32618 600000 4500000 30) "$tmp/rgb.bin" u8_lzw_strips_band_be.tif
# Tiles, zstd + predictor 2, band-interleaved, BigTIFF, int16 with nodata.
src i16 int16 2 -32768
tr -co TILED=YES -co BLOCKXSIZE=48 -co BLOCKYSIZE=32 -co INTERLEAVE=BAND -co COMPRESS=ZSTD -co PREDICTOR=2 -co BIGTIFF=YES \
	$(geo 3857 1000000 6000000 100) -a_nodata -32768 "$tmp/i16.bin" i16_zstd_tiled_band_bigtiff.tif
# uint32, deflate + predictor 2, tiles, pixel-interleaved, big-endian.
src u32 uint32 2
tr -co TILED=YES -co BLOCKXSIZE=64 -co BLOCKYSIZE=64 -co COMPRESS=DEFLATE -co PREDICTOR=2 -co ENDIANNESS=BIG \
	$(geo 32633 399960 5000040 10) "$tmp/u32.bin" u32_deflate_tiled_be.tif
# int32, LZW + predictor 2, strips, BigTIFF, big-endian.
src i32 int32 1
tr -co TILED=NO -co BLOCKYSIZE=10 -co COMPRESS=LZW -co PREDICTOR=2 -co BIGTIFF=YES -co ENDIANNESS=BIG \
	$(geo 32633 399960 5000040 10) "$tmp/i32.bin" i32_lzw_strips_bigtiff_be.tif
# float64, zstd + predictor 3, tiles, pixel-interleaved, NaN nodata.
src f64 float64 2 nan
tr -co TILED=YES -co BLOCKXSIZE=32 -co BLOCKYSIZE=32 -co COMPRESS=ZSTD -co PREDICTOR=3 -co INTERLEAVE=PIXEL \
	$(geo 3857 1000000 6000000 100) -a_nodata nan "$tmp/f64.bin" f64_zstd_pred3_pixel.tif
# float32 (2 bands), deflate + predictor 3, band-interleaved, big-endian, internal overviews (gdaladdo).
src f32 float32 2
tr -co TILED=YES -co BLOCKXSIZE=32 -co BLOCKYSIZE=48 -co COMPRESS=DEFLATE -co PREDICTOR=3 -co INTERLEAVE=BAND -co ENDIANNESS=BIG \
	$(geo 4326 10.0 47.0 0.0003) "$tmp/f32.bin" f32_deflate_pred3_band_be.tif
gdaladdo -q -r average f32_deflate_pred3_band_be.tif 2 4
# uint16, uncompressed tiles, 2 bands pixel-interleaved, overviews.
src u16 uint16 2
tr -co TILED=YES -co BLOCKXSIZE=64 -co BLOCKYSIZE=64 -co INTERLEAVE=PIXEL $(geo 32633 399960 5000040 10) \
	"$tmp/u16.bin" u16_none_tiled_ovr.tif
gdaladdo -q -r nearest u16_none_tiled_ovr.tif 2 4
# JPEG variants: one band (grey), three bands band-interleaved (grey planes), RGB without YCbCr.
tr -b 1 -co TILED=YES -co COMPRESS=JPEG -co BLOCKXSIZE=64 -co BLOCKYSIZE=64 "$tmp/naip.bin" u8_jpeg_gray.tif
tr -co TILED=YES -co COMPRESS=JPEG -co INTERLEAVE=BAND -co BLOCKXSIZE=64 -co BLOCKYSIZE=64 "$tmp/naip.bin" u8_jpeg_band.tif
tr -co TILED=YES -co COMPRESS=JPEG -co PHOTOMETRIC=RGB -co BLOCKXSIZE=64 -co BLOCKYSIZE=64 "$tmp/naip.bin" u8_jpeg_rgb.tif
# JPEG strips YCbCr (GDAL: PHOTOMETRIC=YCBCR), a short last strip.
tr -co TILED=NO -co BLOCKYSIZE=16 -co COMPRESS=JPEG -co PHOTOMETRIC=YCBCR "$tmp/naip.bin" u8_jpeg_ycbcr_strips.tif
# Sparse: tiles never written have offset and byte count 0 (GDAL reads them as nodata).
src sp uint8 1
gdal_create -q -of GTiff -outsize $W $H -bands 1 -ot Byte -a_srs EPSG:32633 -a_ullr 0 $H $W 0 -a_nodata 7 \
	-co TILED=YES -co BLOCKXSIZE=64 -co BLOCKYSIZE=64 -co SPARSE_OK=TRUE -co COMPRESS=DEFLATE u8_deflate_sparse.tif
tr -srcwin 0 0 100 70 -a_srs EPSG:32633 -a_ullr 0 $H 100 80 "$tmp/sp.bin" "$tmp/sp_part.tif"
gdalwarp -q "$tmp/sp_part.tif" u8_deflate_sparse.tif
# Georeferencing variants: a rotated grid (ModelTransformation) and PixelIsPoint (GDAL shifts by half a pixel).
src small uint8 1
tr -of VRT "$tmp/small.bin" "$tmp/rot.vrt"
sed -i 's#<VRTDataset \([^>]*\)>#<VRTDataset \1><SRS>EPSG:32633</SRS><GeoTransform>400000, 8.66, 5, 5000000, 5, -8.66</GeoTransform>#' "$tmp/rot.vrt"
tr -outsize 40 30 -co COMPRESS=DEFLATE "$tmp/rot.vrt" u8_rotated.tif
tr -outsize 40 30 -co COMPRESS=DEFLATE -mo AREA_OR_POINT=Point $(geo 32633 399960 5000040 10) "$tmp/small.bin" u8_pixel_is_point.tif
# An internal 1-bit mask (GDAL's per-dataset mask) on strips, masking the block of zeros of band 1.
src mk uint8 1 0
tr --config GDAL_TIFF_INTERNAL_MASK YES -mask 1 -co TILED=NO -co BLOCKYSIZE=16 -co COMPRESS=DEFLATE "$tmp/mk.bin" u8_strips_mask.tif
# int8 (GDAL 3.6 writes it as Byte with PIXELTYPE=SIGNEDBYTE: SampleFormat 2), deflate + predictor 2, tiles.
tr -b 1 -co PIXELTYPE=SIGNEDBYTE -co TILED=YES -co BLOCKXSIZE=32 -co BLOCKYSIZE=32 -co COMPRESS=DEFLATE -co PREDICTOR=2 "$tmp/rgb.bin" i8_deflate_tiled.tif
# float32 nodata that float32 cannot hold exactly (0.1): GDAL compares in the band's type.
src nd01 float32 1 0.1
tr -outsize 60 40 -r nearest -co COMPRESS=DEFLATE -a_nodata 0.1 "$tmp/nd01.bin" f32_nodata_0.1.tif
# zstd at its highest level (22): frames declare a 128 MiB window for 8 KB tiles.
tr -co TILED=YES -co BLOCKXSIZE=64 -co BLOCKYSIZE=64 -co COMPRESS=ZSTD -co ZSTD_LEVEL=22 -co PREDICTOR=2 \
	$(geo 32633 399960 5000040 10) "$tmp/s2.bin" u16_zstd22_tiled.tif
# Band descriptions with XML's special characters and a literal entity: GDAL escapes a GDAL_METADATA value
# (CPLES_XML) before its XML writer escapes it again, and undoes both on reading.
tr -of VRT "$tmp/small.bin" "$tmp/desc.vrt"
sed -i 's|<VRTRasterBand \([^>]*\)>|<VRTRasterBand \1><Description>red \&amp; nir \&lt;b4/b8\&gt; \&quot;ratio\&quot; \&amp;amp; \&#233;</Description>|' "$tmp/desc.vrt"
tr -outsize 8 6 -co COMPRESS=DEFLATE $(geo 32633 399960 5000040 10) "$tmp/desc.vrt" u8_description_escaped.tif
ls -l *.tif
