#!/usr/bin/env python3
"""Writes a deterministic test raster as ENVI (raw band-sequential, little
endian, with a .hdr) for make.sh: smooth gradients plus seeded noise, a
block of nodata where asked, values spanning the type's sign and range."""
import array, math, random, sys

name, dtype, width, height, bands = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
nodata = sys.argv[6] if len(sys.argv) > 6 else None
codes = {"uint8": ("B", 1), "int16": ("h", 2), "int32": ("i", 3), "float32": ("f", 4), "float64": ("d", 5),
         "uint16": ("H", 12), "uint32": ("I", 13)}
typecode, envi = codes[dtype]
rng = random.Random(26)
lo, hi = {"uint8": (0, 255), "int16": (-32768, 32767), "int32": (-2**31, 2**31 - 1),
          "uint16": (0, 65535), "uint32": (0, 2**32 - 1)}.get(dtype, (None, None))
data = array.array(typecode)
for b in range(bands):
    for y in range(height):
        for x in range(width):
            s = math.sin(x / 17.0 + b) * math.cos(y / 11.0 - b) + (x + 2 * y) / (width + 2 * height)
            n = rng.random()
            if dtype.startswith("float"):
                # Quantised (1/256) so the files compress; the DEM keeps full precision.
                v = s * 1234.5 - 321.0 + n * 0.01
                if "dem" not in name:
                    v = round(v * 256) / 256
            else:
                span = hi - lo
                v = lo + int((s + 1.0) / 3.0 * span * 0.98) + int(n * min(span, 255) * 0.05)
                v = max(lo + 1, min(hi, v))
            if nodata is not None and 20 <= x < 40 and 10 <= y < 25 and b == 0:
                v = float(nodata) if dtype.startswith("float") else int(nodata)
            data.append(v)
if sys.byteorder != "little":
    data.byteswap()
with open(name, "wb") as f:
    data.tofile(f)
with open(name.rsplit(".", 1)[0] + ".hdr", "w") as f:
    f.write("ENVI\nsamples = %d\nlines = %d\nbands = %d\nheader offset = 0\nfile type = ENVI Standard\n"
            "data type = %d\ninterleave = bsq\nbyte order = 0\n" % (width, height, bands, envi))
