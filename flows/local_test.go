package flows_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// evenTaker is a flows.Local that takes the FPDU records of even frames,
// and the message and conn records of even frames of the connections that
// had MPA or FPDU records (TCP connections), and counts them per
// connection (its worker's ids).
type evenTaker struct {
	taken map[int]int
	tcp   map[int]bool
	total int
}

func (e *evenTaker) Take(r *flows.Record) bool {
	if r.Type == flows.RecFPDU || r.Type == flows.RecMPA {
		e.tcp[r.Conn] = true
	}
	if !takeable(r, e.tcp) || r.Frame%2 != 0 {
		return false
	}
	e.taken[r.Conn]++
	e.total++
	return true
}

// takeable reports whether a Local may take r: an FPDU record, or a
// message or conn record of a connection in tcp.
func takeable(r *flows.Record, tcp map[int]bool) bool {
	return r.Type == flows.RecFPDU || ((r.Type == flows.RecMessage || r.Type == flows.RecConn) && tcp[r.Conn])
}

func (e *evenTaker) Flush(conn int) any {
	if conn < 0 {
		if e.total == 0 {
			return nil
		}
		return -e.total
	}
	n := e.taken[conn]
	delete(e.taken, conn)
	delete(e.tcp, conn)
	if n == 0 {
		return nil
	}
	return n
}

// TestLocalContract checks what flows.Parallel promises a Local: every
// FPDU record is either taken or emitted; what a connection's Local
// flushed reaches absorb with the connection's id as emit sees it, after
// the last record emitted for it (but its summary and findings, for a
// connection that retired) and before any record of a later
// connection with the same id; Flush(-1) comes last, and covers every
// take. Records other than the taken ones come out in the order one
// Decoder gives. Also with workers that hand their records over after
// every record or every few (flows.SetSegRecords), on a capture of tiny
// FPDUs among others; and with a single Decoder given a Local
// (Decoder.SetLocal).
func TestLocalContract(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.pcap")
	var inputs []struct {
		name string
		pkts []capture.Packet
	}
	var mixed []capture.Packet
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pkts := testutil.ReadPackets(data)
		inputs = append(inputs, struct {
			name string
			pkts []capture.Packet
		}{filepath.Base(f), pkts})
		for _, p := range pkts {
			p.Frame = uint64(len(mixed) + 1)
			mixed = append(mixed, p)
		}
	}
	var buf bytes.Buffer
	if err := synth.WritePerf(&buf, 4<<20, 7); err != nil {
		t.Fatal(err)
	}
	inputs = append(inputs, struct {
		name string
		pkts []capture.Packet
	}{"perf 4 MiB", testutil.ReadPackets(buf.Bytes())}, struct {
		name string
		pkts []capture.Packet
	}{"all captures in a row", mixed}, struct {
		name string
		pkts []capture.Packet
	}{"tiny sends", testutil.ReadPackets(tinySends(t, 2, 3000))}, struct {
		name string
		pkts []capture.Packet
	}{"connections reset 10 s apart, which retire", packetsOf(t, resetAfterSends(t, 60, 30, 10*time.Second))})

	def := flows.SegRecords()
	defer flows.SetSegRecords(def)
	for _, in := range inputs {
		// What the end of the capture emits for a connection that
		// retired may follow its flush (Local).
		retire := strings.HasSuffix(in.name, "which retire")
		// One Decoder: every FPDU per connection, and the other records.
		want := map[int]int{}
		tcp := map[int]bool{} // one Decoder's ids, which Parallel's emit sees too
		var wantOther []string
		even := 0
		d := flows.NewDecoder(flows.Options{}, func(r *flows.Record) {
			if r.Type == flows.RecFPDU || r.Type == flows.RecMPA {
				tcp[r.Conn] = true
			}
			if takeable(r, tcp) {
				want[r.Conn]++
				if r.Frame%2 == 0 {
					even++
					return
				}
			}
			wantOther = append(wantOther, fmt.Sprint(r.Type, r.Frame, r.Conn))
		})
		for i := range in.pkts {
			d.Packet(&in.pkts[i])
		}
		d.Close()

		for _, c := range []struct{ n, seg int }{{1, 0}, {2, 0}, {3, 0}, {2, 1}, {3, 4}} {
			// seg 0: the default.
			n := c.n
			if c.seg > 0 {
				flows.SetSegRecords(c.seg)
			}
			got := map[int]int{}
			var gotOther []string
			absorbed := map[int]bool{}
			final := 0
			emit := func(r *flows.Record) {
				if final != 0 {
					t.Fatalf("%s: a record after Flush(-1)", in.name)
				}
				if absorbed[r.Conn] && !(retire && (r.Type == flows.RecConn || r.Type == flows.RecFinding)) {
					t.Fatalf("%s: %v record of frame %d for connection %d after its flush", in.name, r.Type, r.Frame, r.Conn)
				}
				if takeable(r, tcp) {
					got[r.Conn]++
				}
				gotOther = append(gotOther, fmt.Sprint(r.Type, r.Frame, r.Conn))
			}
			absorb := func(conn int, v any) {
				k := v.(int)
				if conn < 0 {
					final -= k
					return
				}
				if k <= 0 || absorbed[conn] {
					t.Fatalf("%s: absorb(%d, %d)", in.name, conn, k)
				}
				got[conn] += k
				absorbed[conn] = true
			}
			newLocal := func() flows.Local { return &evenTaker{taken: map[int]int{}, tcp: map[int]bool{}} }
			var dec interface {
				Packet(*capture.Packet)
				Close()
			}
			if n == 1 {
				// A single Decoder with a Local keeps the same promises.
				d := flows.NewDecoder(flows.Options{Recycle: true}, emit)
				d.SetLocal(newLocal(), absorb)
				dec = d
			} else {
				par, err := flows.NewParallel(flows.Options{Recycle: true}, n, emit)
				if err != nil {
					t.Fatal(err)
				}
				par.SetLocal(newLocal, absorb)
				dec = par
			}
			for i := range in.pkts {
				dec.Packet(&in.pkts[i])
			}
			dec.Close()
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%s, %d workers: FPDUs per connection %v, one Decoder %v", in.name, n, got, want)
			}
			if fmt.Sprint(gotOther) != fmt.Sprint(wantOther) {
				t.Fatalf("%s, %d workers: the records not taken differ from one Decoder's", in.name, n)
			}
			if final != even {
				t.Fatalf("%s, %d workers: Flush(-1) absorbed %d takes, want %d", in.name, n, final, even)
			}
			if c.seg > 0 {
				flows.SetSegRecords(def)
			}
		}
	}
}
