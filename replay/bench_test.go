package replay

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/iwarpkit/iwarpkit/synth"
)

// largeCapture writes synth's large connection (MPA rev 2, CRC, markers
// initiator->responder) of about size octets.
func largeCapture(b *testing.B, size int64) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), "large.pcap")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	if err := synth.WriteLarge(f, nil, size, 1); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return p
}

func sentOctets(r *Report) int64 {
	var n int64
	for _, c := range r.Conns {
		for _, s := range c.Sides {
			if s != nil {
				n += int64(s.SentOctets)
			}
		}
	}
	return n
}

func BenchmarkLoad(b *testing.B) {
	p := largeCapture(b, 16<<20)
	st, _ := os.Stat(p)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(p, LoadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWritePcap(b *testing.B) {
	ss := load(b, largeCapture(b, 16<<20), LoadOptions{})
	b.ReportAllocs()
	for b.Loop() {
		rep, err := WritePcap(context.Background(), io.Discard, ss, Options{})
		if err != nil || !rep.OK() {
			b.Fatal(err)
		}
		b.SetBytes(sentOctets(rep))
	}
}

func BenchmarkLoopback(b *testing.B) {
	ss := load(b, largeCapture(b, 16<<20), LoadOptions{})
	b.ReportAllocs()
	for b.Loop() {
		rep, err := Loopback(context.Background(), ss, Options{})
		if err != nil || !rep.OK() {
			b.Fatal(err, rep.Conns[0].Err, rep.Conns[0].Mismatches)
		}
		b.SetBytes(sentOctets(rep))
	}
}
