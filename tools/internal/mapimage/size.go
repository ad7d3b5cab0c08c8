package mapimage

// MaxCanvasPixels is the largest canvas Render draws on (the tallest map),
// for callers that budget decoded pixels. Render holds two of them at once
// (the map and its footprint layer).
const MaxCanvasPixels = Width * (headerHeight + maxMapHeight + max(footerHeight, footerWithLocator))
