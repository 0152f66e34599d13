package replay

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// synthFile writes the named synth scenario (seed 1) to a temporary file.
func synthFile(t testing.TB, name string) string {
	t.Helper()
	s, ok := synth.Named(name, 1)
	if !ok {
		t.Fatalf("no synth scenario %q", name)
	}
	p := filepath.Join(t.TempDir(), name+".pcap")
	if _, err := synth.WriteFiles(s, p); err != nil {
		t.Fatalf("synth %s: %v", name, err)
	}
	return p
}

func load(t testing.TB, path string, o LoadOptions) []*Script {
	t.Helper()
	ss, err := Load(path, o)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return ss
}

// toPcap replays scripts with WritePcap into a temporary file.
func toPcap(t testing.TB, ss []*Script, o Options) (string, *Report) {
	t.Helper()
	var b bytes.Buffer
	rep, err := WritePcap(context.Background(), &b, ss, o)
	if err != nil {
		t.Fatalf("WritePcap: %v", err)
	}
	p := filepath.Join(t.TempDir(), "replayed.pcap")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, rep
}

// msgKey is what the round trip compares of a message, as the decoder's own
// message records give it (opcode and length; the decoder gathers segments
// independently of package replay).
type flowMsg struct {
	Op  uint8
	Len uint64
}

// decoderMessages returns each direction's messages from the decoder's
// message records, in frame order, and the connection summaries.
func decoderMessages(t testing.TB, path string) (map[int][2][]flowMsg, map[int]*flows.ConnSummary, []*flows.Record) {
	t.Helper()
	recs := testutil.Decode(t, path, flows.Options{})
	msgs := map[int][2][]flowMsg{}
	sums := map[int]*flows.ConnSummary{}
	for _, r := range recs {
		switch r.Type {
		case flows.RecMessage:
			d := 0
			if r.Dir == flows.DirR2I {
				d = 1
			}
			m := msgs[r.Conn]
			m[d] = append(m[d], flowMsg{uint8(r.Message.Opcode), r.Message.Length})
			msgs[r.Conn] = m
		case flows.RecConn:
			sums[r.Conn] = r.Summary
		}
	}
	return msgs, sums, recs
}

// infos returns the message infos of each direction of a script.
func infos(s *Script, skipRTR bool) [2][]MessageInfo {
	var out [2][]MessageInfo
	for i := range s.Messages {
		m := &s.Messages[i]
		if skipRTR && m.RTR {
			continue
		}
		out[m.Dir] = append(out[m.Dir], recInfo(m))
	}
	return out
}

// recInfo is a recorded message's MessageInfo.
func recInfo(m *Message) MessageInfo {
	i := infoOf(&m.Head)
	i.Length, i.Digest = m.Length, m.Digest
	return i
}

func openCapture(t testing.TB, path string) *capture.Source {
	t.Helper()
	src, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}
