package report

import (
	"html/template"
	"io"
	"iter"
	"sync"
	"time"

	"github.com/iwarpkit/iwarpkit/dissect"
)

// htmlFinding is one row of the HTML findings list.
type htmlFinding struct {
	Conn     string
	Frame    uint64
	Time     string
	Severity string
	Code     string
	Msg      string
	Ref      string
}

// htmlLat is one row of the HTML latency table (values formatted).
type htmlLat struct {
	Conn                          string
	Count                         uint64
	Min, P50, P90, P99, Max, Mean string
}

type htmlKV struct{ K, V string }

type htmlData struct {
	Title      string
	Summary    []htmlKV
	Worst      string
	Conns      iter.Seq[connRow] // made row by row as the page is written
	Findings   []findRow
	Details    []htmlFinding
	Dropped    int
	Throughput svgChart
	Latency    svgChart
	LatRows    []htmlLat
	Untracked  int
	MaxConns   int
}

func tsLabel(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000000 UTC")
}

// WriteHTML writes one self-contained HTML page (inline CSS and inline SVG,
// no scripts, no external assets): a summary, the connection table, the
// findings (per code, then each kept finding), a throughput-over-time chart
// (octets of FPDUs on the wire per time bucket and direction, an FPDU counted
// at the time of the frame holding its first octet, in at most MaxBuckets
// buckets) and the RDMA Read latency table and histogram. All
// text, the title and everything from the capture included, is escaped by
// html/template.
func (c *Collector) WriteHTML(w io.Writer, title string) error {
	d := htmlData{
		Title:      title,
		Conns:      c.connSeq,
		Findings:   c.findRows(),
		Dropped:    c.dropped,
		Throughput: c.throughputChart(),
		Latency:    c.latencyChart(),
		Untracked:  c.untracked,
		MaxConns:   c.maxConns,
	}
	if s, ok := c.Worst(); ok {
		d.Worst = s.String()
	}
	var dur time.Duration
	sp := c.total()
	if sp.haveTS {
		dur = sp.duration()
	}
	d.Summary = []htmlKV{
		{"First record", tsLabel(sp.first())},
		{"Last record", tsLabel(sp.last())},
		{"Duration", durLabel(dur)},
		{"Connections", itoa(c.rowCount())},
		{"FPDUs", itoa(c.fpdus)},
		{"RDMA messages", itoa(c.messages)},
		{"Octets (FPDUs on the wire)", utoa(c.octets)},
		{"CRC errors", itoa(c.crcErrors)},
		{"RDMA Reads timed", utoa(c.lat.n)},
		{"Findings", itoa(c.nFindings) + " (" + itoa(c.sev[dissect.SeverityError]) + " error, " +
			itoa(c.sev[dissect.SeverityWarning]) + " warning, " + itoa(c.sev[dissect.SeverityNote]) + " note)"},
	}
	if c.damage != "" {
		d.Summary = append(d.Summary, htmlKV{"Capture damaged (the decode stopped there)", c.damage})
	}
	for i := range c.kept {
		k := &c.kept[i]
		conn := "other"
		if k.conn >= 0 {
			conn = itoa(k.conn)
		}
		d.Details = append(d.Details, htmlFinding{Conn: conn, Frame: k.frame, Time: tsLabel(k.ts),
			Severity: k.sev.String(), Code: k.code, Msg: k.msg, Ref: k.ref})
	}
	for _, r := range c.latRows() {
		h := htmlLat{Conn: r.Conn, Count: r.Count, Min: "-", P50: "-", P90: "-", P99: "-", Max: "-", Mean: "-"}
		if r.Count > 0 {
			h.Min, h.P50, h.P90, h.P99, h.Max, h.Mean = micros(r.Min), micros(r.P50), micros(r.P90), micros(r.P99), micros(r.Max), micros(r.Mean)
		}
		d.LatRows = append(d.LatRows, h)
	}
	return pageTmpl().Execute(w, &d)
}

// pageTmpl is parsed when a page is first written rather than at
// package initialisation, which every run of iwarpdump paid for (0.7 ms
// of its start, 1,600 allocations) and few use.
var pageTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Parse(pageHTML))
})

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:24px;color:#1d2330;background:#fff}
h1{font-size:1.6em;margin:0 0 4px}
h2{font-size:1.2em;margin:28px 0 8px;border-bottom:2px solid #dde3ec;padding-bottom:4px}
.sub{color:#5b6577;margin:0 0 16px}
table{border-collapse:collapse;font-size:13px;margin:4px 0}
th,td{border:1px solid #d5dbe5;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef2f7}
td.n{text-align:right;font-variant-numeric:tabular-nums}
tr:nth-child(even) td{background:#f8fafc}
dl.sum{display:grid;grid-template-columns:max-content auto;gap:4px 16px;margin:0}
dl.sum dt{color:#5b6577}
dl.sum dd{margin:0;font-weight:600}
.sev{display:inline-block;padding:1px 6px;border-radius:3px;font-size:12px;font-weight:600}
.sev-error{background:#fde2e1;color:#a1120b}
.sev-warning{background:#fff1d6;color:#8a5300}
.sev-note{background:#e3eefc;color:#1f4f8f}
.ok{background:#dff5e3;color:#17612a}
.muted{color:#5b6577}
svg{font-family:inherit;font-size:12px;background:#fff}
.axis{stroke:#3b4252;stroke-width:1}
.grid{stroke:#e3e7ee;stroke-width:1}
.s-i2r{stroke:#1f6feb;fill:#1f6feb}
.s-r2i{stroke:#d9480f;fill:#d9480f}
.s-unk{stroke:#6c757d;fill:#6c757d}
path.area{fill-opacity:.25;stroke:none}
path.line{fill:none;stroke-width:1.5}
rect.bar{fill:#7048e8}
.legend span{display:inline-block;margin-right:16px}
.swatch{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}
.sw-i2r{background:#1f6feb}.sw-r2i{background:#d9480f}.sw-unk{background:#6c757d}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="sub">iWARP capture report{{if .Worst}}: worst finding <span class="sev sev-{{.Worst}}">{{.Worst}}</span>{{else}}: <span class="sev ok">no findings</span>{{end}}</p>

<h2 id="summary">Summary</h2>
<dl class="sum">
{{range .Summary}}<dt>{{.K}}</dt><dd>{{.V}}</dd>
{{end}}</dl>

<h2 id="connections">Connections</h2>
<table id="conn-table">
<thead><tr><th>ID</th><th>Initiator</th><th>Responder</th><th>State</th><th>MPA rev</th><th>CRC</th><th>Markers i2r/r2i</th><th>Reply IRD/ORD</th><th>FPDUs</th><th>Messages</th><th>Octets</th><th>CRC errors</th><th>Findings</th><th>Retrans</th><th>ZeroWin</th><th>Stalls</th><th>Stalled s</th><th>Cut</th></tr></thead>
<tbody>
{{range .Conns}}<tr><td class="n">{{.Label}}</td><td>{{.Initiator}}</td><td>{{.Responder}}</td><td>{{.State}}</td><td class="n">{{.Rev}}</td><td>{{.CRC}}</td><td>{{.Markers}}</td><td>{{.IRDORD}}</td><td class="n">{{.FPDUs}}</td><td class="n">{{.Messages}}</td><td class="n">{{.Octets}}</td><td class="n">{{.CRCErrors}}</td><td class="n">{{.Findings}}{{if .Worst}} <span class="sev sev-{{.Worst}}">{{.Worst}}</span>{{end}}</td>{{range .TCPCells}}<td class="n">{{.}}</td>{{end}}</tr>
{{else}}<tr><td colspan="13" class="muted">no iWARP connections</td></tr>
{{end}}</tbody>
</table>
{{if .Untracked}}<p class="muted">{{.Untracked}} records of connections beyond the first {{.MaxConns}} are counted in the row "other".</p>{{end}}

<h2 id="findings">Findings</h2>
<table id="findings-table">
<thead><tr><th>Severity</th><th>Code</th><th>Count</th><th>First frame</th><th>Reference</th><th>Message (first)</th></tr></thead>
<tbody>
{{range .Findings}}<tr><td><span class="sev sev-{{.Severity}}">{{.Severity}}</span></td><td><code>{{.Code}}</code></td><td class="n">{{.Count}}</td><td class="n">{{.First}}</td><td>{{.Ref}}</td><td>{{.Msg}}</td></tr>
{{else}}<tr><td colspan="6" class="muted">no findings</td></tr>
{{end}}</tbody>
</table>
{{if .Details}}
<h3>Each finding</h3>
<table id="finding-list">
<thead><tr><th>Conn</th><th>Frame</th><th>Time</th><th>Severity</th><th>Code</th><th>Message</th><th>Reference</th></tr></thead>
<tbody>
{{range .Details}}<tr><td class="n">{{.Conn}}</td><td class="n">{{.Frame}}</td><td>{{.Time}}</td><td><span class="sev sev-{{.Severity}}">{{.Severity}}</span></td><td><code>{{.Code}}</code></td><td>{{.Msg}}</td><td>{{.Ref}}</td></tr>
{{end}}</tbody>
</table>
{{end}}{{if .Dropped}}<p class="muted">{{.Dropped}} more findings are counted above but not listed.</p>{{end}}

<h2 id="throughput">Throughput over time</h2>
{{with .Throughput}}{{if .Empty}}<p class="muted">no FPDUs</p>{{else}}
<div class="legend">{{range .Series}}<span><span class="swatch {{.Swatch}}"></span>{{.Name}} ({{.Total}})</span>{{end}}</div>
<svg id="throughput-chart" xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="octets per time bucket and direction">
{{$c := .}}{{range .YTicks}}<line class="grid" x1="{{$c.Left}}" x2="{{$c.Right}}" y1="{{.Pos}}" y2="{{.Pos}}"/><text x="{{$c.Left}}" y="{{.Pos}}" dx="-6" dy="4" text-anchor="end">{{.Label}}</text>
{{end}}{{range .XTicks}}<line class="axis" x1="{{.Pos}}" x2="{{.Pos}}" y1="{{$c.Bottom}}" y2="{{$c.TickEnd}}"/><text x="{{.Pos}}" y="{{$c.Bottom}}" dy="18" text-anchor="middle">{{.Label}}</text>
{{end}}{{range .Series}}<path class="area {{.Class}}" d="{{.Area}}"/><path class="line {{.Class}}" d="{{.Line}}"><title>{{.Name}}</title></path>
{{end}}<line class="axis" x1="{{.Left}}" x2="{{.Right}}" y1="{{.Bottom}}" y2="{{.Bottom}}"/><line class="axis" x1="{{.Left}}" x2="{{.Left}}" y1="{{.Top}}" y2="{{.Bottom}}"/>
<text x="{{.Left}}" y="{{.H}}" dx="{{.PlotW}}" dy="-8" text-anchor="end">{{.XLabel}}</text>
<text transform="rotate(-90)" x="-{{.Top}}" y="14" text-anchor="end">{{.YLabel}}</text>
</svg>{{end}}{{end}}

<h2 id="latency">RDMA Read latency</h2>
<table id="latency-table">
<thead><tr><th>Conn</th><th>Reads</th><th>Min (µs)</th><th>P50 (µs)</th><th>P90 (µs)</th><th>P99 (µs)</th><th>Max (µs)</th><th>Mean (µs)</th></tr></thead>
<tbody>
{{range .LatRows}}<tr><td class="n">{{.Conn}}</td><td class="n">{{.Count}}</td><td class="n">{{.Min}}</td><td class="n">{{.P50}}</td><td class="n">{{.P90}}</td><td class="n">{{.P99}}</td><td class="n">{{.Max}}</td><td class="n">{{.Mean}}</td></tr>
{{end}}</tbody>
</table>
<p class="muted">Percentiles by nearest rank from a log-bucket histogram, within 1% of the exact value; minimum, maximum and mean are exact.</p>
{{with .Latency}}{{if .Empty}}<p class="muted">no RDMA Read Response matched to its Read Request</p>{{else}}
<svg id="latency-chart" xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="RDMA Read latency histogram">
{{$c := .}}{{range .YTicks}}<line class="grid" x1="{{$c.Left}}" x2="{{$c.Right}}" y1="{{.Pos}}" y2="{{.Pos}}"/><text x="{{$c.Left}}" y="{{.Pos}}" dx="-6" dy="4" text-anchor="end">{{.Label}}</text>
{{end}}{{range .Bars}}<rect class="bar" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Title}}</title></rect>
{{end}}{{range .XTicks}}<line class="axis" x1="{{.Pos}}" x2="{{.Pos}}" y1="{{$c.Bottom}}" y2="{{$c.TickEnd}}"/><text x="{{.Pos}}" y="{{$c.Bottom}}" dy="18" text-anchor="middle">{{.Label}}</text>
{{end}}<line class="axis" x1="{{.Left}}" x2="{{.Right}}" y1="{{.Bottom}}" y2="{{.Bottom}}"/><line class="axis" x1="{{.Left}}" x2="{{.Left}}" y1="{{.Top}}" y2="{{.Bottom}}"/>
<text x="{{.Left}}" y="{{.H}}" dx="{{.PlotW}}" dy="-8" text-anchor="end">{{.XLabel}}</text>
<text transform="rotate(-90)" x="-{{.Top}}" y="14" text-anchor="end">{{.YLabel}}</text>
</svg>{{end}}{{end}}
</body>
</html>
`
