package report

import (
	"bytes"
	"net/netip"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// siw returns the path of a real siw capture (testdata/siw at the module
// root).
func siw(name string) string {
	return filepath.Join("..", "testdata", "siw", name+".pcap")
}

// collect decodes a capture and feeds every record to a new Collector.
func collect(t testing.TB, name string) (*Collector, []*flows.Record) {
	t.Helper()
	recs := testutil.Decode(t, siw(name), flows.Options{})
	c := NewCollector()
	for _, r := range recs {
		c.Add(r)
	}
	return c, recs
}

// tsharkFields runs tshark -T fields over a capture and returns the rows,
// tab-separated fields each.
func tsharkFields(t *testing.T, name, filter string, fields ...string) [][]string {
	t.Helper()
	ts := testutil.RequireTshark(t)
	args := []string{"-n", "-r", siw(name), "-T", "fields", "-E", "separator=/t"}
	if filter != "" {
		args = append(args, "-Y", filter)
	}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	var out, errb bytes.Buffer
	cmd := exec.Command(ts, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("tshark %v: %v\n%s", args, err, errb.String())
	}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
		if l != "" {
			rows = append(rows, strings.Split(l, "\t"))
		}
	}
	return rows
}

// endpoint builds an address and port from tshark's ip.src/ipv6.src and
// tcp port columns (one of the two addresses is empty).
func endpoint(t *testing.T, v4, v6, port string) netip.AddrPort {
	t.Helper()
	s := v4
	if s == "" {
		s = v6
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatalf("tshark address %q: %v", s, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		t.Fatalf("tshark port %q: %v", port, err)
	}
	return netip.AddrPortFrom(a, uint16(p))
}

// tableRows parses a text table written by the Write methods: the lines
// between the header line and the closing rule, split on runs of two or
// more spaces, keyed by nothing (in order).
func tableRows(t *testing.T, text string) (header []string, rows [][]string) {
	t.Helper()
	lines := strings.Split(text, "\n")
	if len(lines) < 5 || !strings.HasPrefix(lines[0], "===") || !strings.HasPrefix(lines[2], "===") {
		t.Fatalf("not a table:\n%s", text)
	}
	split := testutil.TableCells
	header = split(lines[3])
	for _, l := range lines[4:] {
		if strings.HasPrefix(l, "===") {
			return header, rows
		}
		rows = append(rows, split(l))
	}
	t.Fatalf("table without closing rule:\n%s", text)
	return nil, nil
}

// fmtSscan parses a float cell.
func fmtSscan(s string, v *float64) (int, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	*v = f
	return 1, nil
}

// sortedConns returns copies of the tabulated connections by id, packed
// rows unpacked (rowpack.go), then "other".
func (c *Collector) sortedConns() []*connStats {
	var out []*connStats
	c.eachConn(func(cs *connStats) { out = append(out, copyRow(cs)) })
	return out
}

// row returns connection id's row, a copy for a packed one, or nil.
func (c *Collector) row(id int) *connStats {
	if cs := c.conns[id]; cs != nil {
		return cs
	}
	s, ok := c.packedAt.get(id)
	if !ok {
		return nil
	}
	var cs connStats
	if _, err := c.unpackRow(c.rows.Bytes(s.at, int(s.n)), &cs); err != nil {
		panic(err)
	}
	return copyRow(&cs)
}

// copyRow copies cs with what it points to, which eachConn reuses.
func copyRow(cs *connStats) *connStats {
	v := *cs
	if h := cs.ops.open; h != nil {
		d := *h
		v.ops.open = &d
	}
	v.ops.cells = slices.Clone(cs.ops.cells)
	v.fam = slices.Clone(cs.fam)
	if cs.lat != nil {
		l := *cs.lat
		l.counts = slices.Clone(l.counts)
		v.lat = &l
	}
	return &v
}
