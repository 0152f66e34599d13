package sctp_test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/ddp"
	"github.com/iwarpkit/iwarpkit/dissect/mpa"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/dissect/sctp"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// samplePacket builds an SCTP packet with an INIT-less mix: a session
// control Enhanced Initiate, a DDP Send segment and a SACK.
func samplePacket() []byte {
	b := sctp.AppendHeader(nil, sctp.Header{SrcPort: 5000, DstPort: 5001, VerificationTag: 0x01020304})
	sc := sctp.AppendSessionControl(nil, sctp.SessionControl{Func: sctp.FuncEnhancedInitiate,
		PD: mpa.AppendEnhanced(nil, mpa.Enhanced{IRD: 16, ORD: 8, A: true, B: true})})
	b = sctp.AppendData(b, sctp.Data{Flags: sctp.FlagsUnfragment, TSN: 100, Stream: 0, SSN: 0, PPID: sctp.PPIDDDPSessionControl, UserData: sc})
	seg := rdmap.AppendSegment(nil, rdmap.Segment{DDP: ddp.Header{L: true, DV: 1, QN: 0, MSN: 1}, RV: 1, Opcode: rdmap.OpSend,
		Payload: []byte("hello")})
	b = sctp.AppendData(b, sctp.Data{Flags: sctp.FlagsUnfragment, TSN: 101, Stream: 1, SSN: 0, PPID: sctp.PPIDDDPSegment, UserData: seg})
	b = sctp.AppendChunk(b, sctp.ChunkSack, 0, []byte{0, 0, 0, 99, 0, 1, 0, 0, 0, 0, 0, 0})
	sctp.SetChecksum(b)
	return b
}

func TestRoundTrip(t *testing.T) {
	h := sctp.Header{SrcPort: 1, DstPort: 2, VerificationTag: 3, Checksum: 0xdeadbeef}
	if got, err := sctp.DecodeHeader(sctp.AppendHeader(nil, h)); err != nil || got != h {
		t.Errorf("header %+v %v", got, err)
	}
	d := sctp.Data{Flags: sctp.FlagBegin | sctp.FlagUnordered | sctp.FlagImmediate, TSN: 0xfffffffe, Stream: 7, SSN: 9, PPID: 16,
		UserData: []byte{1, 2, 3, 4, 5}}
	b := sctp.AppendData(nil, d)
	if len(b) != 24 {
		t.Fatalf("DATA chunk of 5 octets is %d long with padding", len(b))
	}
	c, next, err := sctp.NextChunk(b, 0)
	if err != nil || next != 24 || c.Length != 21 {
		t.Fatalf("chunk %+v next %d %v", c, next, err)
	}
	if got, err := sctp.DecodeData(c); err != nil || !reflect.DeepEqual(got, d) || got.Unfragmented() {
		t.Errorf("data %+v %v", got, err)
	}
	s := sctp.SessionControl{Func: sctp.FuncAccept, PDLen: 3, PD: []byte{7, 8, 9}}
	if got, err := sctp.DecodeSessionControl(sctp.AppendSessionControl(nil, s)); err != nil || !reflect.DeepEqual(got, s) {
		t.Errorf("session %+v %v", got, err)
	}
	in := sctp.Init{InitiateTag: 1, ARwnd: 65535, OutboundStreams: 10, InboundStreams: 10, InitialTSN: 100,
		HasAdaptation: true, AdaptationIndication: 0x12345678}
	c, _, err = sctp.NextChunk(sctp.AppendInit(nil, sctp.ChunkInit, in), 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := sctp.DecodeInit(c); err != nil || got != in {
		t.Errorf("init %+v %v", got, err)
	}
	in.HasAdaptation, in.AdaptationIndication = false, 0
	c, _, _ = sctp.NextChunk(sctp.AppendInit(nil, sctp.ChunkInitAck, in), 0)
	if got, err := sctp.DecodeInit(c); err != nil || got != in {
		t.Errorf("init ack %+v %v", got, err)
	}
}

func TestWalkPacket(t *testing.T) {
	pkt := samplePacket()
	h, _ := sctp.DecodeHeader(pkt)
	if sctp.Checksum(pkt) != h.Checksum {
		t.Fatal("checksum")
	}
	var types []sctp.ChunkType
	var ppids []uint32
	for off := sctp.HeaderLen; off < len(pkt); {
		c, next, err := sctp.NextChunk(pkt, off)
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, c.Type)
		if c.Type == sctp.ChunkData {
			d, err := sctp.DecodeData(c)
			if err != nil {
				t.Fatal(err)
			}
			ppids = append(ppids, d.PPID)
			switch d.PPID {
			case sctp.PPIDDDPSessionControl:
				s, err := sctp.DecodeSessionControl(d.UserData)
				if err != nil {
					t.Fatal(err)
				}
				e, ulp, ok := s.Enhanced()
				if !ok || e.IRD != 16 || e.ORD != 8 || !e.A || !e.B || len(ulp) != 0 || s.Func.String() != "enhanced_initiate" {
					t.Errorf("session %+v %+v", s, e)
				}
				if e.RTR(mpa.FlagsDraft01).String() != "send,write" {
					t.Errorf("RTR %v", e.RTR(mpa.FlagsDraft01))
				}
			case sctp.PPIDDDPSegment:
				seg, err := rdmap.Decode(d.UserData)
				if err != nil || seg.Opcode != rdmap.OpSend || string(seg.Payload) != "hello" || seg.DDP.MSN != 1 {
					t.Errorf("segment %+v %v", seg, err)
				}
			}
		}
		off = next
	}
	if !reflect.DeepEqual(types, []sctp.ChunkType{sctp.ChunkData, sctp.ChunkData, sctp.ChunkSack}) ||
		!reflect.DeepEqual(ppids, []uint32{17, 16}) {
		t.Errorf("chunks %v ppids %v", types, ppids)
	}
	pkt[20] ^= 1
	if sctp.Checksum(pkt) == h.Checksum {
		t.Error("checksum does not change with the data")
	}
}

func TestErrors(t *testing.T) {
	if _, err := sctp.DecodeHeader(make([]byte, 11)); err != dissect.ErrTruncated {
		t.Error(err)
	}
	if _, next, err := sctp.NextChunk([]byte{0, 0, 0}, 0); err != dissect.ErrTruncated || next != 3 {
		t.Error(err)
	}
	if _, _, err := sctp.NextChunk([]byte{0, 0, 0, 3}, 0); err != dissect.ErrBadLength {
		t.Error(err)
	}
	c, _, err := sctp.NextChunk([]byte{0, 3, 0, 40, 1, 2}, 0)
	if err != dissect.ErrTruncated || len(c.Value) != 2 || c.Length != 40 {
		t.Errorf("%+v %v", c, err)
	}
	// The last chunk may lack its padding.
	if _, next, err := sctp.NextChunk([]byte{0, 3, 0, 5, 1}, 0); err != nil || next != 5 {
		t.Error(next, err)
	}
	if _, err := sctp.DecodeData(sctp.Chunk{Type: sctp.ChunkData, Value: make([]byte, 11)}); err != dissect.ErrBadLength {
		t.Error(err)
	}
	if _, err := sctp.DecodeData(sctp.Chunk{Type: sctp.ChunkSack, Value: make([]byte, 20)}); err != dissect.ErrBadLength {
		t.Error(err)
	}
	if _, err := sctp.DecodeSessionControl([]byte{0, 1, 0}); err != dissect.ErrTruncated {
		t.Error(err)
	}
	s, err := sctp.DecodeSessionControl([]byte{0, 2, 0, 9, 1, 2})
	if err != dissect.ErrBadLength || s.Func != sctp.FuncAccept || len(s.PD) != 2 {
		t.Errorf("%+v %v", s, err)
	}
	if _, err := sctp.DecodeInit(sctp.Chunk{Type: sctp.ChunkInit, Value: make([]byte, 15)}); err != dissect.ErrBadLength {
		t.Error(err)
	}
	if sctp.Checksum(make([]byte, 5)) != 0 {
		t.Error("short checksum")
	}
}

func TestNames(t *testing.T) {
	want := map[sctp.FuncCode]string{1: "initiate", 2: "accept", 3: "reject", 4: "terminate",
		5: "enhanced_initiate", 6: "enhanced_accept", 7: "enhanced_reject", 0: "function(0)", 8: "function(8)"}
	for f, n := range want {
		if f.String() != n {
			t.Errorf("%d: %q", f, f.String())
		}
	}
	if !sctp.FuncEnhancedReject.Rejecting() || !sctp.FuncInitiate.Initiating() || sctp.FuncAccept.Enhanced() {
		t.Error("predicates")
	}
	if sctp.ChunkInitAck.String() != "INIT ACK" || sctp.ChunkType(99).String() != "type(99)" {
		t.Error("chunk names")
	}
	if sctp.PPIDName(16) != "ddp_segment" || sctp.PPIDName(17) != "ddp_session_control" || sctp.PPIDName(51) != "" {
		t.Error("PPID names")
	}
}

func TestChecks(t *testing.T) {
	var codes []string
	for _, s := range []sctp.SessionControl{{Func: 9}, {Func: sctp.FuncEnhancedAccept, PD: []byte{1}}, {Func: sctp.FuncAccept}} {
		for _, f := range s.Check(nil) {
			codes = append(codes, f.Code)
		}
	}
	if !reflect.DeepEqual(codes, []string{"sctp.session_function_unknown", "sctp.session_enhanced_short"}) {
		t.Errorf("%v", codes)
	}
	if _, _, ok := (sctp.SessionControl{Func: sctp.FuncEnhancedAccept, PD: []byte{1}}).Enhanced(); ok {
		t.Error("short enhanced data decoded")
	}
}

func TestNoAllocs(t *testing.T) {
	pkt := samplePacket()
	n := testing.AllocsPerRun(100, func() {
		if _, err := sctp.DecodeHeader(pkt); err != nil {
			t.Fatal(err)
		}
		_ = sctp.Checksum(pkt)
		for off := sctp.HeaderLen; off < len(pkt); {
			c, next, err := sctp.NextChunk(pkt, off)
			if err != nil {
				t.Fatal(err)
			}
			if d, err := sctp.DecodeData(c); err == nil && d.PPID == sctp.PPIDDDPSessionControl {
				s, _ := sctp.DecodeSessionControl(d.UserData)
				_, _, _ = s.Enhanced()
			}
			off = next
		}
	})
	if n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// TestTshark writes the sample packet in an Ethernet/IPv4 frame and has
// Wireshark check the CRC32c and read the chunk types and PPIDs.
func TestTshark(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	path := filepath.Join(t.TempDir(), "sctp.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolSCTP, SrcIP: net.IP{192, 0, 2, 1}, DstIP: net.IP{192, 0, 2, 2}}
	pay := gopacket.Payload(samplePacket())
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, pay); err != nil {
		t.Fatal(err)
	}
	ci := gopacket.CaptureInfo{Timestamp: time.Unix(1700000000, 0), CaptureLength: len(buf.Bytes()), Length: len(buf.Bytes())}
	if err := w.WritePacket(ci, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out, err := exec.Command(tshark, "-r", path, "-o", "sctp.checksum:CRC-32C", "-T", "fields", "-E", "occurrence=a",
		"-e", "sctp.checksum.status", "-e", "sctp.chunk_type", "-e", "sctp.data_payload_proto_id", "-e", "sctp.data_tsn_raw",
		"-e", "sctp.data_sid").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	got := strings.TrimSpace(string(out))
	// checksum good (1), chunk types 0,0,3, PPIDs 17,16, TSNs 100,101,
	// streams 0,1.
	if want := "1\t0,0,3\t17,16\t100,101\t0x0000,0x0001"; got != want {
		t.Errorf("tshark: %q, want %q", got, want)
	}
}

func FuzzWalk(f *testing.F) {
	f.Add(samplePacket())
	f.Add(sctp.AppendInit(sctp.AppendHeader(nil, sctp.Header{}), sctp.ChunkInit, sctp.Init{HasAdaptation: true}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := sctp.DecodeHeader(b); err != nil {
			return
		}
		_ = sctp.Checksum(b)
		for off := sctp.HeaderLen; off < len(b); {
			c, next, err := sctp.NextChunk(b, off)
			if next <= off {
				t.Fatalf("no progress at %d", off)
			}
			off = next
			if err != nil {
				continue
			}
			switch c.Type {
			case sctp.ChunkInit, sctp.ChunkInitAck:
				_, _ = sctp.DecodeInit(c)
			case sctp.ChunkData:
				d, err := sctp.DecodeData(c)
				if err != nil {
					continue
				}
				// decode -> encode -> decode is stable.
				c2, _, err := sctp.NextChunk(sctp.AppendData(nil, d), 0)
				if err != nil {
					t.Fatal(err)
				}
				if d2, err := sctp.DecodeData(c2); err != nil || !reflect.DeepEqual(d, d2) {
					t.Fatalf("DATA round trip %+v %+v %v", d, d2, err)
				}
				if d.PPID == sctp.PPIDDDPSessionControl {
					s, err := sctp.DecodeSessionControl(d.UserData)
					if err == nil {
						s2, err := sctp.DecodeSessionControl(sctp.AppendSessionControl(nil, s))
						if err != nil || !bytes.Equal(s.PD, s2.PD) || s.Func != s2.Func {
							t.Fatal("session control round trip")
						}
					} else if !errors.Is(err, dissect.ErrBadLength) && !errors.Is(err, dissect.ErrTruncated) {
						t.Fatal(err)
					}
					_ = s.Check(nil)
					_, _, _ = s.Enhanced()
				}
			}
		}
	})
}

func BenchmarkWalk(b *testing.B) {
	pkt := samplePacket()
	b.ReportAllocs()
	b.SetBytes(int64(len(pkt)))
	for b.Loop() {
		_ = sctp.Checksum(pkt)
		for off := sctp.HeaderLen; off < len(pkt); {
			c, next, _ := sctp.NextChunk(pkt, off)
			if d, err := sctp.DecodeData(c); err == nil && d.PPID == sctp.PPIDDDPSessionControl {
				_, _ = sctp.DecodeSessionControl(d.UserData)
			}
			off = next
		}
	}
}
