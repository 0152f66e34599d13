package report

import (
	"bytes"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// TestOpenOpsBounded: connections reset after their messages, whose conn
// records come at the end of the capture (flows' retired connections),
// keep at most maxOpenOps dense opcode histograms between them, the
// oldest packed as more come, and the tables are those of a Collector
// that keeps every histogram dense to the conn record.
func TestOpenOpsBounded(t *testing.T) {
	var buf bytes.Buffer
	if err := synth.WriteStress(&buf, synth.StressResets, 600, 1); err != nil {
		t.Fatal(err)
	}
	pkts := testutil.ReadPackets(buf.Bytes())
	tables := func(limit int) (string, int) {
		defer func(old int) { maxOpenOps = old }(maxOpenOps)
		maxOpenOps = limit
		c := NewCollector()
		most := 0
		d := flows.NewDecoder(flows.Options{}, func(r *flows.Record) {
			c.Add(r)
			if r.Type == flows.RecFPDU {
				n := 0
				for _, cs := range c.conns {
					if cs.ops.open != nil {
						n++
					}
				}
				most = max(most, n)
			}
		})
		for i := range pkts {
			d.Packet(&pkts[i])
		}
		d.Close()
		var out bytes.Buffer
		for _, write := range []func(*bytes.Buffer) error{
			func(b *bytes.Buffer) error { return c.WriteConn(b) },
			func(b *bytes.Buffer) error { return c.WriteOps(b) },
			func(b *bytes.Buffer) error { return c.WriteFindings(b) },
		} {
			if err := write(&out); err != nil {
				t.Fatal(err)
			}
		}
		return out.String(), most
	}
	want, wantMost := tables(1 << 30)
	got, most := tables(50)
	if got != want {
		t.Errorf("the tables with at most 50 dense histograms differ from those with every one dense")
	}
	if most > 50 || wantMost <= 50 {
		t.Errorf("at most %d dense histograms at once with a bound of 50 (%d without)", most, wantMost)
	}
	t.Logf("dense histograms at once: %d without a bound, %d with 50", wantMost, most)
}
