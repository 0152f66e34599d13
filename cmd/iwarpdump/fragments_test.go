package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// fragmentCapture writes a copy of the pcap file in whose IPv4 datagrams
// of more than 64 payload octets are each sent as two fragments (RFC 791
// §3.2: the first with More Fragments, the second at the offset, in 8-octet
// units, of the rest), and returns how many fragments it wrote.
func fragmentCapture(t *testing.T, in, out string) int {
	t.Helper()
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		ip := data[14:]
		if binary.BigEndian.Uint16(data[12:14]) != 0x0800 || ip[0] != 0x45 || len(data) != ci.Length ||
			int(binary.BigEndian.Uint16(ip[2:4])) != len(ip) || len(ip)-20 <= 64 {
			if err := w.WritePacket(ci, data); err != nil {
				t.Fatal(err)
			}
			continue
		}
		payload := ip[20:]
		cut := len(payload) / 2 &^ 7
		for i, part := range [][]byte{payload[:cut], payload[cut:]} {
			frag := append(append([]byte(nil), data[:34]...), part...)
			h := frag[14:34]
			binary.BigEndian.PutUint16(h[2:4], uint16(20+len(part)))
			flags := uint16(0x2000) // MF
			if i == 1 {
				flags = uint16(cut / 8)
			}
			binary.BigEndian.PutUint16(h[6:8], flags)
			binary.BigEndian.PutUint16(h[10:12], 0)
			var sum uint32
			for j := 0; j < 20; j += 2 {
				sum += uint32(binary.BigEndian.Uint16(h[j:]))
			}
			for sum > 0xffff {
				sum = sum&0xffff + sum>>16
			}
			binary.BigEndian.PutUint16(h[10:12], ^uint16(sum))
			ci.CaptureLength, ci.Length = len(frag), len(frag)
			if err := w.WritePacket(ci, frag); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFragmentsSaid: IP fragments are not reassembled, and iwarpdump says
// how many it left, with one worker or two (the octets they carry were
// reported only as capture loss, tcp.gap, which they are not).
func TestFragmentsSaid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "frag.pcap")
	n := fragmentCapture(t, siw+"crc_v2_rping.pcap", path)
	if n == 0 {
		t.Fatal("no datagram fragmented")
	}
	want := "iwarpdump: " + strconv.Itoa(n) + " IP fragments not reassembled"
	for _, j := range []string{"1", "2"} {
		code, _, errs := runCmd(t, nil, "-r", path, "-j", j, "-q", "-z", "conn")
		if code != 0 || !strings.Contains(errs, want) {
			t.Errorf("-j %s: exit %d, stderr does not say %q:\n%s", j, code, want, errs)
		}
	}
	if _, _, errs := runCmd(t, nil, "-r", siw+"crc_v2_rping.pcap", "-q"); strings.Contains(errs, "fragments") {
		t.Errorf("fragments said of a capture without: %s", errs)
	}
}
