package mapimage

// MaxCanvasPixels is the largest canvas Render draws on (the tallest map),
// for callers that budget decoded pixels.
const MaxCanvasPixels = Width * (headerHeight + maxMapHeight + max(footerHeight, footerWithLocator))
