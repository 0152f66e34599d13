package capture_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/iwarpkit/iwarpkit/capture"
)

// TestTCPOptionsCut: a capture whose snap length (60 octets, made by
// editcap, below Linux's 66 octets of Ethernet, IPv4 and TCP headers with timestamps) cut
// the TCP options still gives every TCP segment, its payload all cut:
// ports, sequence and acknowledgment numbers, flags and window as the
// whole frame gives them, and PayloadWireLen its payload's length
// (RFC 9293 §3.1), as tshark decodes such frames ("Packet size limited
// during capture"). A frame captured whole whose Data Offset runs past
// its segment stays malformed.
func TestTCPOptionsCut(t *testing.T) {
	whole, err := os.ReadFile("../testdata/siw/crc_v2_rping.pcap")
	if err != nil {
		t.Fatal(err)
	}
	full, err := readAll(t, whole)
	if err != nil {
		t.Fatal(err)
	}
	s60, err := os.ReadFile("../testdata/snaplen/crc_v2_rping_s60.pcap") // editcap -s 60
	if err != nil {
		t.Fatal(err)
	}
	const snap = 60
	cut, err := readAll(t, s60)
	if err != nil || len(cut) != len(full) {
		t.Fatalf("snap %d: %d packets of %d, %v", snap, len(cut), len(full), err)
	}
	optsCut := 0
	for i, p := range cut {
		f := full[i]
		if f.Kind != capture.KindTCP {
			continue
		}
		if p.Kind != capture.KindTCP || p.Src != f.Src || p.Dst != f.Dst || p.Seq != f.Seq || p.Ack != f.Ack ||
			p.Flags != f.Flags || p.Window != f.Window {
			t.Fatalf("snap %d, frame %d: %v %v>%v seq %d ack %d %v win %d; whole: %v %v>%v seq %d ack %d %v win %d",
				snap, p.Frame, p.Kind, p.Src, p.Dst, p.Seq, p.Ack, p.Flags, p.Window, f.Kind, f.Src, f.Dst, f.Seq, f.Ack, f.Flags, f.Window)
		}
		if p.PayloadWireLen != len(f.Payload) || len(p.Payload) > len(f.Payload) || !bytes.Equal(p.Payload, f.Payload[:len(p.Payload)]) {
			t.Fatalf("snap %d, frame %d: payload %d of %d octets, whole %d", snap, p.Frame, len(p.Payload), p.PayloadWireLen, len(f.Payload))
		}
		if p.CapLen < 14+20+int(f.Data[14+20+12]>>4)*4 {
			optsCut++
		}
	}
	if optsCut < 40 {
		t.Fatalf("snap %d: %d frames with their TCP options cut", snap, optsCut)
	}

	// A whole frame whose Data Offset (15 words) runs past its segment.
	fr := ether(t, ipv4TCP(t, []byte("payload")))
	fr[14+20+12] = 0xf0
	bad, err := readAll(t, writePcap(t, false, layers.LinkTypeEthernet, fr))
	if err != nil || len(bad) != 1 || bad[0].Kind != capture.KindBad {
		t.Fatalf("bogus data offset: %+v, %v", bad, err)
	}
}

// TestTCPOptionsCutTshark: tshark reads the same fields from the frames of
// a capture cut to 60 octets.
func TestTCPOptionsCutTshark(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("IWARP_REQUIRE_TSHARK") == "1" {
			t.Fatalf("tshark is required (IWARP_REQUIRE_TSHARK=1): %v", err)
		}
		t.Skip("tshark not found; set IWARP_REQUIRE_TSHARK=1 to make this a failure")
	}
	const path = "../testdata/snaplen/crc_v2_rping_s60.pcap" // editcap -s 60
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tshark, "-r", path, "-o", "tcp.relative_sequence_numbers:FALSE", "-T", "fields", "-E", "separator=,",
		"-e", "tcp.srcport", "-e", "tcp.dstport", "-e", "tcp.seq", "-e", "tcp.ack", "-e", "tcp.flags", "-e", "tcp.window_size_value", "-e", "tcp.len").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	pkts, err := readAll(t, data)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(pkts) {
		t.Fatalf("tshark %d frames, we %d", len(lines), len(pkts))
	}
	for i, p := range pkts {
		got := fmt.Sprintf("%d,%d,%d,%d,0x%04x,%d,%d", p.Src.Port(), p.Dst.Port(), p.Seq, p.Ack, uint16(p.Flags), p.Window, p.PayloadWireLen)
		if lines[i] != got {
			t.Errorf("frame %d: tshark %s, we %s", i+1, lines[i], got)
		}
	}
}
