package flows_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// cutPayload returns a copy of an Ethernet/IPv4 TCP frame with its TCP
// payload cut to its first n octets, lengths and checksums set again.
func cutPayload(t *testing.T, frame []byte, n int) []byte {
	t.Helper()
	p := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.Default)
	eth, _ := p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
	if eth == nil || ip == nil || tcp == nil {
		t.Fatal("not an Ethernet/IPv4 TCP frame")
	}
	payload := slices.Clone(tcp.Payload[:n])
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	b := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(b, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, ip, tcp, gopacket.Payload(payload)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestZeroWindowProbeOctet: the receiver advertises a zero window and the
// sender probes it with the next octet it has to send (RFC 9293
// §3.8.6.1; FreeBSD and Windows do so, Linux probes with no octet), twice,
// each answered with the zero window again; then the window opens and
// the sender sends the octet again at the start of its next segment.
// tshark flags the probes tcp.analysis.zero_window_probe, the opening
// tcp.analysis.window_update, and no frame a retransmission. The probe is
// neither progress that ends the stall (the episode ends with the window
// update) nor new octets, so that the segment after it is no
// retransmission: the stall ended at the first probe "when it sent new
// octets", and Retrans counted 1 on a connection without loss.
func TestZeroWindowProbeOctet(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	c := baseConn(42000)
	c.Ops = []synth.Op{{Dir: synth.I2R, Kind: synth.Write, Size: 6000, STag: 0x51}, {Dir: synth.R2I, Kind: synth.Send, Size: 100}}
	gen := generate(t, []synth.Conn{c})
	genPath := filepath.Join(t.TempDir(), "gen.pcap")
	if err := os.WriteFile(genPath, gen, 0o644); err != nil {
		t.Fatal(err)
	}
	frames, times, _ := captureFrames(t, genPath)
	pkts := testutil.ReadPackets(gen)
	// za: the responder's first pure ACK after two data segments of the
	// initiator; nd: the initiator's next data segment.
	za, nd, data := -1, -1, 0
	for i, p := range pkts {
		switch {
		case p.Src == c.Initiator && len(p.Payload) > 0:
			data++
			if za >= 0 && nd < 0 {
				nd = i
			}
		case p.Src == c.Responder && len(p.Payload) == 0 && data >= 3 && za < 0:
			za = i
		}
	}
	if za < 0 || nd < 0 {
		t.Fatalf("no ACK and data segment to edit (%d, %d)", za, nd)
	}
	zero := setWindow(frames[za], 0)
	probe := cutPayload(t, frames[nd], 1)
	at := times[za]
	var f2 [][]byte
	var t2 []time.Time
	f2, t2 = append(f2, frames[:za]...), append(t2, times[:za]...)
	for _, e := range []struct {
		f []byte
		d time.Duration
	}{{zero, 0}, {probe, 300 * time.Millisecond}, {zero, time.Millisecond},
		{probe, 600 * time.Millisecond}, {zero, time.Millisecond}, {frames[za], 100 * time.Millisecond}} {
		at = at.Add(e.d)
		f2, t2 = append(f2, e.f), append(t2, at)
	}
	shift := at.Sub(times[za])
	for i := za + 1; i < len(frames); i++ {
		f2, t2 = append(f2, frames[i]), append(t2, times[i].Add(shift))
	}
	path, edited := writePcap(t, "zwprobe.pcap", f2, t2)

	// tshark's flags, frame by frame.
	out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-e", "frame.number",
		"-e", "tcp.analysis.retransmission", "-e", "tcp.analysis.fast_retransmission", "-e", "tcp.analysis.spurious_retransmission",
		"-e", "tcp.analysis.out_of_order", "-e", "tcp.analysis.zero_window", "-e", "tcp.analysis.zero_window_probe",
		"-e", "tcp.analysis.window_update").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	var retrans, zeroWins int
	var probes, updates []uint64
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		f := strings.Split(l, "\t")
		for len(f) < 8 {
			f = append(f, "")
		}
		n, _ := strconv.ParseUint(f[0], 10, 64)
		if f[1] != "" || f[2] != "" || f[3] != "" || f[4] != "" {
			retrans++
		}
		if f[5] != "" {
			zeroWins++
		}
		if f[6] != "" {
			probes = append(probes, n)
		}
		if f[7] != "" {
			updates = append(updates, n)
		}
	}
	if len(probes) != 2 || len(updates) != 1 {
		t.Fatalf("tshark sees probes %v and window updates %v, the edit meant 2 and 1", probes, updates)
	}
	for _, workers := range []int{0, 2, -2} {
		var stalls []*flows.Record
		var sum *flows.ConnSummary
		for _, r := range recordsWith(t, edited, workers) {
			switch {
			case r.Type == flows.RecConn:
				sum = r.Summary
			case r.Type == flows.RecFinding && r.Finding.Code == "tcp.stall":
				stalls = append(stalls, r)
				if workers == 0 {
					t.Logf("frame %d: %s", r.Frame, r.Finding.Msg)
				}
			}
		}
		if sum == nil {
			t.Fatalf("workers %d: no conn record", workers)
		}
		if sum.TCP.Retransmissions != retrans || sum.TCP.ZeroWindows != zeroWins || sum.TCP.Stalls != 1 {
			t.Errorf("workers %d: retransmissions %d, zero windows %d, stalls %d; tshark %d, %d, and one stall",
				workers, sum.TCP.Retransmissions, sum.TCP.ZeroWindows, sum.TCP.Stalls, retrans, zeroWins)
		}
		for _, r := range stalls {
			if slices.Contains(probes, r.Frame) && strings.Contains(r.Finding.Msg, "ended") {
				t.Errorf("workers %d: the stall ends at frame %d, a zero window probe: %s", workers, r.Frame, r.Finding.Msg)
			}
		}
		if n := len(stalls); n == 0 || stalls[n-1].Frame != updates[0] || !strings.Contains(stalls[n-1].Finding.Msg, "opened its window again") {
			t.Errorf("workers %d: the stall episode does not end at the window update (frame %d)", workers, updates[0])
		}
	}
}
