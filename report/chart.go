package report

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/iwarpkit/iwarpkit/flows"
)

// Chart geometry, in SVG user units.
const (
	chartW     = 960
	chartH     = 320
	chartLeft  = 80
	chartRight = 48
	chartTop   = 20
	chartBot   = 50
)

// svgTick is an axis tick: its position along the axis and its label.
type svgTick struct {
	Pos   float64
	Label string
}

// svgSeries is one direction of the throughput chart.
type svgSeries struct {
	Name   string
	Class  string // stroke and fill colour
	Swatch string // legend colour
	Line   string // path data of the step line
	Area   string // path data of the filled area under it
	Total  string // octets in the series
}

// svgBar is one bar of the latency histogram.
type svgBar struct {
	X, Y, W, H float64
	Title      string
}

// svgChart holds everything the page template needs to draw one chart.
type svgChart struct {
	W, H                    int
	Left, Top, PlotW, PlotH float64
	Bottom, Right           float64
	TickEnd                 float64 // lower end of the x tick marks
	XTicks, YTicks          []svgTick
	XLabel, YLabel          string
	Series                  []svgSeries
	Bars                    []svgBar
	Empty                   bool
}

func newChart() svgChart {
	return svgChart{
		W: chartW, H: chartH, Left: chartLeft, Top: chartTop,
		PlotW: chartW - chartLeft - chartRight, PlotH: chartH - chartTop - chartBot,
		Bottom: chartH - chartBot, Right: chartW - chartRight, TickEnd: chartH - chartBot + 5,
	}
}

// niceStep returns a round tick step (1, 2 or 5 times a power of ten) that
// cuts span into about n intervals.
func niceStep(span float64, n int) float64 {
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return 1
	}
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / p; {
	case f <= 1:
		return p
	case f <= 2:
		return 2 * p
	case f <= 5:
		return 5 * p
	}
	return 10 * p
}

// fnum formats a number for a path or a label without exponent notation.
func fnum(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// octetLabel formats an octet count with SI prefixes (kB = 1000 octets).
func octetLabel(v float64) string {
	switch {
	case v >= 1e9:
		return fnum(v/1e9) + " GB"
	case v >= 1e6:
		return fnum(v/1e6) + " MB"
	case v >= 1e3:
		return fnum(v/1e3) + " kB"
	}
	return fnum(v) + " B"
}

// durLabel formats a duration for labels and captions, to three
// significant digits.
func durLabel(d time.Duration) string {
	v := float64(d)
	switch {
	case d >= time.Second:
		return fnum(sig3(v/1e9)) + " s"
	case d >= time.Millisecond:
		return fnum(sig3(v/1e6)) + " ms"
	case d >= time.Microsecond:
		return fnum(sig3(v/1e3)) + " µs"
	}
	return fnum(v) + " ns"
}

// axisUnit picks the unit of a time axis from its span.
func axisUnit(span time.Duration) (time.Duration, string) {
	switch {
	case span >= 2*time.Second:
		return time.Second, " s"
	case span >= 2*time.Millisecond:
		return time.Millisecond, " ms"
	case span >= 2*time.Microsecond:
		return time.Microsecond, " µs"
	}
	return 1, " ns"
}

// sig3 rounds v to three significant digits.
func sig3(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, math.Floor(math.Log10(math.Abs(v)))-2)
	return math.Round(v/p) * p
}

// throughputChart draws the octets of FPDUs per time bucket and direction
// as step areas, with the time since the first FPDU on the x axis.
func (c *Collector) throughputChart() svgChart {
	ch := newChart()
	tl := &c.tl
	if len(tl.b) == 0 {
		ch.Empty = true
		return ch
	}
	n := len(tl.b)
	var peak uint64
	for _, b := range tl.b {
		for _, v := range b {
			peak = max(peak, v)
		}
	}
	ymax := float64(peak)
	ystep := niceStep(ymax, 5)
	ymax = math.Max(ystep, math.Ceil(ymax/ystep)*ystep)
	for k := 0; float64(k)*ystep <= ymax*1.0001; k++ {
		v := float64(k) * ystep
		ch.YTicks = append(ch.YTicks, svgTick{Pos: ch.Bottom - v/ymax*ch.PlotH, Label: octetLabel(v)})
	}
	span := time.Duration(n) * tl.width
	xstep := niceStep(float64(span), 8)
	unit, uname := axisUnit(span)
	for k := 0; float64(k)*xstep <= float64(span)*1.0001; k++ {
		v := float64(k) * xstep
		ch.XTicks = append(ch.XTicks, svgTick{Pos: ch.Left + v/float64(span)*ch.PlotW, Label: fnum(v/float64(unit)) + uname})
	}
	ch.XLabel = "time since the first FPDU (" + c.tl.t0.UTC().Format("2006-01-02 15:04:05.000000 UTC") + ")"
	ch.YLabel = "octets per " + durLabel(tl.width)
	x := func(i int) float64 { return ch.Left + float64(i)/float64(n)*ch.PlotW }
	y := func(v uint64) float64 { return ch.Bottom - float64(v)/ymax*ch.PlotH }
	for _, d := range dirOrder {
		var total uint64
		for _, b := range tl.b {
			total += b[d]
		}
		if total == 0 {
			continue
		}
		var line strings.Builder
		for i, b := range tl.b {
			yy := fnum(y(b[d]))
			if i == 0 {
				line.WriteString("M" + fnum(x(0)) + "," + yy)
			} else {
				line.WriteString(" V" + yy)
			}
			line.WriteString(" H" + fnum(x(i+1)))
		}
		l := line.String()
		area := "M" + fnum(x(0)) + "," + fnum(ch.Bottom) + " L" + l[1:] + " V" + fnum(ch.Bottom) + " Z"
		name := dirName(d)
		ch.Series = append(ch.Series, svgSeries{Name: name, Class: seriesClass(d), Swatch: "sw" + seriesClass(d)[1:], Line: l, Area: area, Total: octetLabel(float64(total))})
	}
	return ch
}

// latencyChart draws the RDMA Read latency histogram as bars on a log
// scale (bars of equal ratio between the minimum and the maximum).
func (c *Collector) latencyChart() svgChart {
	ch := newChart()
	bars := c.lat.bars(24)
	if len(bars) == 0 {
		ch.Empty = true
		return ch
	}
	var peak uint64
	for _, b := range bars {
		peak = max(peak, b.n)
	}
	ymax := float64(peak)
	ystep := math.Max(1, niceStep(ymax, 5))
	ymax = math.Max(ystep, math.Ceil(ymax/ystep)*ystep)
	for k := 0; float64(k)*ystep <= ymax*1.0001; k++ {
		v := float64(k) * ystep
		ch.YTicks = append(ch.YTicks, svgTick{Pos: ch.Bottom - v/ymax*ch.PlotH, Label: fnum(v)})
	}
	bw := ch.PlotW / float64(len(bars))
	every := max(1, len(bars)/6)
	for i, b := range bars {
		h := float64(b.n) / ymax * ch.PlotH
		ch.Bars = append(ch.Bars, svgBar{
			X: ch.Left + float64(i)*bw + 1, Y: ch.Bottom - h, W: math.Max(bw-2, 1), H: h,
			Title: durLabel(b.lo) + " – " + durLabel(b.hi) + ": " + utoa(b.n) + " reads",
		})
		if i%every == 0 {
			ch.XTicks = append(ch.XTicks, svgTick{Pos: ch.Left + float64(i)*bw, Label: durLabel(b.lo)})
		}
	}
	ch.XTicks = append(ch.XTicks, svgTick{Pos: ch.Right, Label: durLabel(bars[len(bars)-1].hi)})
	ch.XLabel = "RDMA Read latency (log scale)"
	ch.YLabel = "reads"
	return ch
}

// seriesClass maps a direction to its CSS class.
func seriesClass(d flows.Dir) string {
	switch d {
	case flows.DirI2R:
		return "s-i2r"
	case flows.DirR2I:
		return "s-r2i"
	}
	return "s-unk"
}
