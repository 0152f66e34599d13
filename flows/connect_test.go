package flows_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
	"github.com/iwarpkit/iwarpkit/synth"
)

// TestConnectFailedAsTshark: the two real failed connects of testdata/tcp
// (a reset from a port nothing listens on; SYNs to a host that never
// answers) each give one tcp.connect_failed, whose frames, count of SYNs
// and time are tshark's view of the same capture; with 1 Decoder, 2
// workers and chunks alike.
func TestConnectFailedAsTshark(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	for _, name := range []string{"connect-refused.pcap", "connect-unanswered.pcap"} {
		t.Run(name, func(t *testing.T) {
			path := "../testdata/tcp/" + name
			out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-E", "separator=/t", "-e", "frame.number",
				"-e", "tcp.flags.syn", "-e", "tcp.flags.ack", "-e", "tcp.flags.reset", "-e", "frame.time_relative",
				"-e", "ip.src", "-e", "tcp.srcport", "-e", "ip.dst", "-e", "tcp.dstport").Output()
			if err != nil {
				t.Fatal(err)
			}
			var syns int
			var lastSyn, rst string
			var span, client, server string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				c := strings.Split(l, "\t")
				switch {
				case c[1] == "1" && c[2] == "0":
					syns++
					lastSyn = c[0]
					client, server = c[5]+":"+c[6], c[7]+":"+c[8]
					f, _ := strconv.ParseFloat(c[4], 64)
					span = strconv.FormatFloat(f, 'f', 6, 64)
				case c[3] == "1" && rst == "":
					rst = c[0]
				}
			}
			want := client + " could not open a TCP connection to " + server + " (the rping port): "
			frames := "[" + lastSyn + " 1]"
			if rst != "" {
				want += server[:strings.LastIndex(server, ":")] + " refused it with a reset (frame " + rst +
					"): nothing listens on the port (the RDMA service is not running, or listens on another address or port)"
				frames = "[" + rst + " 1]"
			} else {
				want += "no answer to " + strconv.Itoa(syns) + " SYNs over " + span + " s: the host is down or unreachable, or a firewall drops the SYNs"
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, workers := range []int{0, 2, -2} {
				var got []string
				state := "refused"
				if rst == "" {
					state = "unanswered"
				}
				conns := 0
				for _, r := range recordsWith(t, data, workers) {
					if r.Type == flows.RecConn {
						conns++
						if s := r.Summary; s.State != state || s.Initiator.String() != client || s.Responder.String() != server || s.FPDUs != 0 {
							t.Errorf("workers %d: conn %+v, want %s from %s to %s", workers, s, state, client, server)
						}
					}
					if r.Type == flows.RecFinding {
						got = append(got, r.Finding.Code+" "+fmtFrames(r.Finding.Frames)+" "+r.Finding.Msg)
					}
				}
				if conns != 1 {
					t.Errorf("workers %d: %d conn records, want 1", workers, conns)
				}
				if w := "tcp.connect_failed " + frames + " " + want; len(got) != 1 || got[0] != w {
					t.Errorf("workers %d:\n got %q\nwant %q", workers, got, w)
				}
			}
		})
	}
}

func fmtFrames(fs []uint64) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = strconv.FormatUint(f, 10)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// TestConnectFailedOtherPorts: the same refused connect to a port of no
// RDMA service (8080), or of NFS over TCP (2049), gives no finding: a
// capture's other TCP traffic stays out of the output.
func TestConnectFailedOtherPorts(t *testing.T) {
	data, err := os.ReadFile("../testdata/tcp/connect-refused.pcap")
	if err != nil {
		t.Fatal(err)
	}
	for _, port := range []uint16{8080, 2049} {
		b := append([]byte(nil), data...)
		// Each frame: Ethernet (14) and IPv4 (20) headers, then TCP; the
		// SYN's destination port and the RST's source port.
		off := 24
		for i := 0; off+16 <= len(b); i++ {
			n := int(binary.LittleEndian.Uint32(b[off+8:]))
			tcp := b[off+16+14+20:]
			if i == 0 {
				binary.BigEndian.PutUint16(tcp[2:], port)
			} else {
				binary.BigEndian.PutUint16(tcp[0:], port)
			}
			off += 16 + n
		}
		if rs := testutil.DecodeBytes(t, b, flows.Options{}); len(rs) != 0 {
			t.Errorf("port %d: %d records, want none: %+v", port, len(rs), rs[0])
		}
	}
}

// TestUnansweredNamesCloser: an RDMA Read Request never answered, then
// the connection reset or closed by one side or the other: the
// rdmap.read_unanswered finding names that side, and the frame of its
// first RST or FIN as the capture's own packets give it.
func TestUnansweredNamesCloser(t *testing.T) {
	for _, tc := range []struct {
		kind synth.CloseKind
		by   synth.Dir
	}{{synth.CloseRST, synth.I2R}, {synth.CloseRST, synth.R2I}, {synth.CloseFIN, synth.I2R}, {synth.CloseFIN, synth.R2I}} {
		sc := unansweredRead(tc.kind)
		sc.Conns[0].Close.By = tc.by
		var pcap bytes.Buffer
		if _, err := synth.Generate(sc, &pcap, nil); err != nil {
			t.Fatal(err)
		}
		closer := sc.Conns[0].Initiator
		if tc.by == synth.R2I {
			closer = sc.Conns[0].Responder
		}
		flag := capture.FlagRST
		if tc.kind == synth.CloseFIN {
			flag = capture.FlagFIN
		}
		var frame uint64
		for _, p := range testutil.ReadPackets(pcap.Bytes()) {
			if p.Flags&flag != 0 {
				if p.Src != closer {
					t.Fatalf("%v by %v: the first %v comes from %v", tc.kind, tc.by, flag, p.Src)
				}
				frame = p.Frame
				break
			}
		}
		want := "before " + closer.String() + " reset the connection (RST, frame " + strconv.FormatUint(frame, 10) + ")"
		if tc.kind == synth.CloseFIN {
			want = "before the connection closed (" + closer.String() + " first, FIN in frame " + strconv.FormatUint(frame, 10) + ")"
		}
		n := 0
		for _, r := range testutil.DecodeBytes(t, pcap.Bytes(), flows.Options{}) {
			if r.Type == flows.RecFinding && r.Finding.Code == "rdmap.read_unanswered" {
				n++
				if !strings.Contains(r.Finding.Msg, " "+want+": ") {
					t.Errorf("%v by %v: %q does not say %q", tc.kind, tc.by, r.Finding.Msg, want)
				}
			}
		}
		if n != 1 {
			t.Errorf("%v by %v: %d rdmap.read_unanswered", tc.kind, tc.by, n)
		}
	}
}

// TestRejectCauseAsTshark: the real siw rejects. The application's reject
// (reject_app_v2) gives its private data after the Enhanced data as text,
// as tshark's iwarp_mpa.privatedata holds it; siw's own MPA-level reject of
// a Request with markers (mpareq_markers: tshark's marker flag 1 in the
// Request, private data 00000000 in the Reply) is a warning that says so.
func TestRejectCauseAsTshark(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	for _, name := range []string{"reject_app_v2.pcap", "mpareq_markers.pcap"} {
		path := "../testdata/siw/" + name
		out, err := exec.Command(tshark, "-r", path, "-Y", "iwarp_mpa", "-T", "fields", "-e", "frame.number",
			"-e", "iwarp_mpa.marker_flag", "-e", "iwarp_mpa.rej_flag", "-e", "iwarp_mpa.privatedata").Output()
		if err != nil {
			t.Fatal(err)
		}
		var want, sev string
		var reqFrame string
		var markers bool
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			c := strings.Split(l, "\t")
			if c[2] == "0" {
				reqFrame, markers = c[0], c[1] == "1"
				continue
			}
			pd, err := hex.DecodeString(c[3])
			if err != nil || len(pd) < 4 {
				t.Fatalf("%s: private data %q", name, c[3])
			}
			text := strings.TrimRight(string(pd[4:]), "\x00")
			switch {
			case text != "":
				sev, want = "note", "its private data reads \""+text+"\" (the application's reason)"
			case markers && bytes.Equal(pd, make([]byte, 4)):
				sev, want = "warning", "with IRD and ORD 0: the Request (frame "+reqFrame+") asked for markers (M=1)"
			default:
				t.Fatalf("%s: unexpected reject %q", name, l)
			}
		}
		n := 0
		for _, r := range testutil.Decode(t, path, flows.Options{}) {
			if r.Type != flows.RecMPA {
				continue
			}
			for _, f := range r.MPA.Findings {
				if f.Code == "mpa.rejected" {
					n++
					if f.Severity.String() != sev || !strings.Contains(f.Msg, want) {
						t.Errorf("%s: %v %q, want %s containing %q", name, f.Severity, f.Msg, sev, want)
					}
				}
			}
		}
		if n != 1 {
			t.Errorf("%s: %d mpa.rejected", name, n)
		}
	}
}

// TestMarkerPtrKeepsFraming: one wrong FPDUPTR, with the CRC recomputed,
// failing, or off, loses no FPDU and no framing: every FPDU of the truth is
// decoded at its sequence number, the wrong marker is mpa.marker_ptr_bad,
// a failing CRC mpa.crc_bad, and there is no mpa.sync_lost.
func TestMarkerPtrKeepsFraming(t *testing.T) {
	for _, name := range []string{"marker-ptr-patched", "marker-ptr-patched-crc-bad", "marker-ptr-patched-nocrc"} {
		tr := triggers[name]
		var pcap bytes.Buffer
		res, err := synth.Generate(tr.gen(), &pcap, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr.patch(t, pcap.Bytes(), res)
		want := map[uint32]bool{}
		for _, r := range res.Records {
			if f, ok := r.(*synth.TruthFPDU); ok {
				want[f.Seq] = true
			}
		}
		got := map[uint32]bool{}
		codes := map[string]int{}
		for _, r := range testutil.DecodeBytes(t, pcap.Bytes(), flows.Options{}) {
			switch r.Type {
			case flows.RecFPDU:
				got[r.FPDU.Seq] = true
				for _, f := range r.FPDU.Findings {
					codes[f.Code]++
				}
			case flows.RecFinding:
				codes[r.Finding.Code]++
			}
		}
		for seq := range want {
			if !got[seq] {
				t.Errorf("%s: the FPDU at seq %d is missing", name, seq)
			}
		}
		wantCRC := 0
		if name == "marker-ptr-patched-crc-bad" {
			wantCRC = 1
		}
		if len(got) != len(want) || codes["mpa.marker_ptr_bad"] != 1 || codes["mpa.crc_bad"] != wantCRC || codes["mpa.sync_lost"] != 0 {
			t.Errorf("%s: %d FPDUs (truth %d), findings %v", name, len(got), len(want), codes)
		}
	}
}

// TestCRCTerminateLinked: the LLP "MPA CRC error" Terminate of the
// generated terminate-llp capture names no segment; rdmap.term_segment
// links it to the FPDU whose CRC the generator corrupted (its truth file's
// crc_status "bad").
func TestCRCTerminateLinked(t *testing.T) {
	truth, err := os.ReadFile("../testdata/synth/terminate-llp.truth.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var bad uint64
	for _, l := range strings.Split(string(truth), "\n") {
		var r struct {
			Type  string `json:"type"`
			Frame uint64 `json:"frame"`
			MPA   struct {
				CRCStatus string `json:"crc_status"`
			} `json:"mpa"`
		}
		if json.Unmarshal([]byte(l), &r) == nil && r.Type == "fpdu" && r.MPA.CRCStatus == "bad" {
			bad = r.Frame
		}
	}
	if bad == 0 {
		t.Fatal("the truth has no FPDU with a bad CRC")
	}
	n := 0
	for _, r := range testutil.Decode(t, "../testdata/synth/terminate-llp.pcap", flows.Options{}) {
		if r.Type == flows.RecFPDU && r.FPDU.SegOK && r.FPDU.Seg.Opcode == rdmap.OpTerminate {
			n++
			if r.FPDU.TermFrame != bad {
				t.Errorf("the Terminate of frame %d is linked to frame %d, the corrupted FPDU is in frame %d", r.Frame, r.FPDU.TermFrame, bad)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d Terminates", n)
	}
}
