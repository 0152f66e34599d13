// Package testutil holds helpers shared by the project's tests: finding
// tshark (required in CI, optional elsewhere) and decoding a capture file to
// records.
package testutil

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/synth"
)

// RequireTshark returns tshark's path. Without tshark the test is skipped
// with a message, or fails when IWARP_REQUIRE_TSHARK=1 (as in CI).
func RequireTshark(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("IWARP_REQUIRE_TSHARK") == "1" {
			t.Fatalf("tshark is required (IWARP_REQUIRE_TSHARK=1) but not found: %v", err)
		}
		t.Skip("tshark not installed: skipping the differential test (apt-get install tshark)")
	}
	return p
}

// Decode reads a capture file through the whole pipeline and returns every
// record in output order.
func Decode(t testing.TB, path string, opts flows.Options) []*flows.Record {
	t.Helper()
	src, err := capture.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer src.Close()
	var out []*flows.Record
	dec := flows.NewDecoder(opts, func(r *flows.Record) { out = append(out, r) })
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read %s: %v", path, err)
		}
		dec.Packet(&p)
	}
	dec.Close()
	return out
}

// DecodeBytes decodes a capture held in memory; it stops quietly where the
// file is damaged (as iwarpdump does, after Close).
func DecodeBytes(t testing.TB, data []byte, opts flows.Options) []*flows.Record {
	t.Helper()
	var out []*flows.Record
	src, err := capture.NewSource(bytes.NewReader(data), "mem")
	if err != nil {
		return nil
	}
	dec := flows.NewDecoder(opts, func(r *flows.Record) { out = append(out, r) })
	for {
		p, err := src.Next()
		if err != nil {
			break
		}
		dec.Packet(&p)
	}
	dec.Close()
	return out
}

// OfType filters records by type.
func OfType(rs []*flows.Record, typ flows.RecordType) []*flows.Record {
	var out []*flows.Record
	for _, r := range rs {
		if r.Type == typ {
			out = append(out, r)
		}
	}
	return out
}

// ReadPackets reads a capture into memory, each packet with its own copy
// of the frame; it stops quietly at damage.
func ReadPackets(data []byte) []capture.Packet {
	src, err := capture.NewSource(bytes.NewReader(data), "test")
	if err != nil {
		return nil
	}
	var pkts []capture.Packet
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) || err != nil {
			break
		}
		OwnPacket(&p)
		pkts = append(pkts, p)
	}
	return pkts
}

// OwnPacket makes p's slices its own.
func OwnPacket(p *capture.Packet) {
	data := bytes.Clone(p.Data)
	if len(p.Payload) > 0 && len(p.Data) > 0 {
		off := len(p.Data) - len(p.Payload)
		// The payload ends at the IP length, which may be before the end
		// of the frame (Ethernet padding): find it.
		if i := bytes.LastIndex(p.Data, p.Payload); i >= 0 {
			off = i
		}
		p.Payload = data[off : off+len(p.Payload)]
	} else {
		p.Payload = bytes.Clone(p.Payload)
	}
	p.Data = data
}

// TsharkTimes returns tshark's Time column (tshark -t format) by frame
// number, for the frames filter displays ("" for all), with env added to
// tshark's environment (TZ for the local formats).
func TsharkTimes(t testing.TB, file, format, filter string, env ...string) map[uint64]string {
	t.Helper()
	args := []string{"-r", file, "-t", format, "-T", "fields", "-e", "frame.number", "-e", "_ws.col.Time"}
	if filter != "" {
		args = append(args, "-Y", filter)
	}
	return TsharkColumn(t, args, env...)
}

// TsharkColumn runs tshark with args, which print two fields a line (-T
// fields -e frame.number -e FIELD), in the environment env adds to, and
// returns the second field by frame number.
func TsharkColumn(t testing.TB, args []string, env ...string) map[uint64]string {
	t.Helper()
	cmd := exec.Command(RequireTshark(t), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %v: %v", args, err)
	}
	m := map[uint64]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fr, v, _ := strings.Cut(l, "\t")
		n, err := strconv.ParseUint(fr, 10, 64)
		if err != nil {
			t.Fatalf("tshark line %q", l)
		}
		m[n] = v
	}
	return m
}

// EpochNanos parses tshark's frame.time_epoch ("1795314735.628872000") into
// nanoseconds since the epoch, without going through a float.
func EpochNanos(t testing.TB, s string) int64 {
	t.Helper()
	sec, frac, _ := strings.Cut(s, ".")
	frac = (frac + "000000000")[:9]
	a, err1 := strconv.ParseInt(sec, 10, 64)
	b, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("bad frame.time_epoch %q", s)
	}
	return a*1e9 + b
}

// LocalZone makes name the local time zone (time.Local) until the test
// ends, and returns it; the test is skipped without a time zone database.
// The local time formats are checked against tshark run with TZ=name.
func LocalZone(t testing.TB, name string) *time.Location {
	t.Helper()
	zone, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("no time zone database: %v", err)
	}
	old := time.Local
	time.Local = zone
	t.Cleanup(func() { time.Local = old })
	return zone
}

// SynthNamed generates synth's named scenario with seed and returns the
// capture and its ground truth.
func SynthNamed(t testing.TB, name string, seed int64) ([]byte, []synth.Record) {
	t.Helper()
	sc, ok := synth.Named(name, seed)
	if !ok {
		t.Fatalf("no synth scenario %q", name)
	}
	var pcap, truth bytes.Buffer
	res, err := synth.Generate(sc, &pcap, &truth)
	if err != nil {
		t.Fatal(err)
	}
	return pcap.Bytes(), res.Records
}

// MarkerSender returns the source endpoint of the truth's FPDUs that carry
// MPA markers, "" when none does (the last one's, when both ends do).
func MarkerSender(truth []synth.Record) string {
	from := ""
	for _, r := range truth {
		if f, ok := r.(*synth.TruthFPDU); ok && len(f.MPA.Markers) > 0 {
			from = f.Src
		}
	}
	return from
}

// TableCells splits a row of a text table (report's -z tables) into its
// cells: the runs between two or more spaces.
func TableCells(line string) []string {
	var cells []string
	for _, c := range strings.Split(strings.TrimSpace(line), "  ") {
		if c = strings.TrimSpace(c); c != "" {
			cells = append(cells, c)
		}
	}
	return cells
}
