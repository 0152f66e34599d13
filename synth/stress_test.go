package synth

import (
	"bytes"
	"errors"
	"strconv"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// stressFacts is what gopacket reads of a stress capture: per initiator
// endpoint, the SYNs, FINs and RSTs it sent or got, and its payload
// octets each way.
type stressFacts struct {
	frames int
	syn    map[string]int // pure SYNs, by initiator
	synAck int
	fin    map[string]int // FINs, by initiator
	rst    map[string]int
	data   map[string]int // payload octets, both ways, by initiator
}

func readStress(t *testing.T, pcap []byte) stressFacts {
	t.Helper()
	r, err := pcapgo.NewReader(bytes.NewReader(pcap))
	if err != nil {
		t.Fatal(err)
	}
	f := stressFacts{syn: map[string]int{}, fin: map[string]int{}, rst: map[string]int{}, data: map[string]int{}}
	for {
		data, _, err := r.ReadPacketData()
		if err != nil {
			break
		}
		f.frames++
		p := gopacket.NewPacket(data, layers.LinkTypeEthernet, gopacket.Default)
		ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if ip == nil || tcp == nil {
			t.Fatalf("frame %d: not IPv4 and TCP", f.frames)
		}
		init := ip.SrcIP.String() + ":" + strconv.Itoa(int(tcp.SrcPort))
		if tcp.SrcPort == 7174 {
			init = ip.DstIP.String() + ":" + strconv.Itoa(int(tcp.DstPort))
		}
		switch {
		case tcp.SYN && !tcp.ACK:
			f.syn[init]++
		case tcp.SYN:
			f.synAck++
		}
		if tcp.FIN {
			f.fin[init]++
		}
		if tcp.RST {
			f.rst[init]++
		}
		f.data[init] += len(tcp.Payload)
	}
	return f
}

// TestStress: each stress workload holds what its name promises, read
// back with gopacket, and is the same for the same seed.
func TestStress(t *testing.T) {
	const n = 120
	gen := func(kind string, seed int64) []byte {
		var b bytes.Buffer
		if err := WriteStress(&b, kind, n, seed); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		return b.Bytes()
	}
	for _, kind := range StressKinds {
		if kind == StressLong {
			continue // below
		}
		p := gen(kind, 5)
		if !bytes.Equal(p, gen(kind, 5)) {
			t.Fatalf("%s: not deterministic", kind)
		}
		f := readStress(t, p)
		if len(f.syn) != n {
			t.Fatalf("%s: %d initiators sent a SYN, want %d", kind, len(f.syn), n)
		}
		for ep, k := range f.syn {
			if k != 1 {
				t.Fatalf("%s: %s sent %d SYNs", kind, ep, k)
			}
		}
		switch kind {
		case StressSYNFlood:
			if f.frames != n || f.synAck != 0 {
				t.Fatalf("synflood: %d frames, %d SYN-ACKs", f.frames, f.synAck)
			}
		case StressOpen:
			if f.synAck != n || len(f.fin)+len(f.rst) != 0 {
				t.Fatalf("open: %d SYN-ACKs, %d FINs, %d RSTs", f.synAck, len(f.fin), len(f.rst))
			}
			for ep, d := range f.data {
				// MPA frames and half of a 64 KiB Write.
				if d < 20<<10 || d > 44<<10 {
					t.Fatalf("open: %s carried %d octets, want about 32 KiB", ep, d)
				}
			}
		case StressChurn, StressResets, StressResetsSlow:
			if f.synAck != n {
				t.Fatalf("%s: %d SYN-ACKs", kind, f.synAck)
			}
			for ep := range f.syn {
				fin, rst := f.fin[ep], f.rst[ep]
				if kind == StressChurn && (fin != 2 || rst != 0) || kind != StressChurn && (fin != 0 || rst != 1) {
					t.Fatalf("%s: %s has %d FINs and %d RSTs", kind, ep, fin, rst)
				}
				if f.data[ep] < 200 {
					t.Fatalf("%s: %s carried %d octets", kind, ep, f.data[ep])
				}
			}
		}
	}
	var long bytes.Buffer
	if err := WriteStress(&long, StressLong, 2, 5); err != nil {
		t.Fatal(err)
	}
	f := readStress(t, long.Bytes())
	if len(f.syn) != 1 || len(f.fin) != 1 || f.data[stressEndpoint(0).String()] < 2<<20 {
		t.Fatalf("longmsg: %d initiators, %d closing, %v octets", len(f.syn), len(f.fin), f.data)
	}
	if err := WriteStress(&bytes.Buffer{}, "nope", 1, 1); !errors.Is(err, ErrStressKind) {
		t.Fatalf("unknown workload: %v", err)
	}
}
