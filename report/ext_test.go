package report

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// truthRec is what TestExtTransportsTabulated reads of a ground-truth
// record of synth's CM and SCTP scenarios (testdata/synthext/*.truth.jsonl,
// written by the generator as it made the capture).
type truthRec struct {
	Type      string `json:"type"`
	Conn      int    `json:"conn"`
	Transport string `json:"transport"`
	State     string `json:"state"`
	Opcode    *int   `json:"opcode"`
	RDMAP     *struct {
		Opcode int `json:"opcode"`
	} `json:"rdmap"`
	PayloadLen   uint64 `json:"payload_len"`
	Messages     int    `json:"messages"`
	DataPackets  int    `json:"data_packets"`
	Segments     int    `json:"segments"`
	Octets       uint64 `json:"octets"`
	Enhanced     bool   `json:"enhanced"`
	IRD          int    `json:"ird"`
	ORD          int    `json:"ord"`
	InitiatorLID int    `json:"initiator_lid"`
	// A cm record's message and, of a REQ or REP, its responder
	// resources and initiator depth.
	Msg                string `json:"msg"`
	ResponderResources *int   `json:"responder_resources"`
	InitiatorDepth     *int   `json:"initiator_depth"`
	Findings           []struct {
		Code string `json:"code"`
	} `json:"findings"`
}

// TestExtTransportsTabulated: the findings of CM exchanges over RoCEv2 and
// native InfiniBand and of DDP over SCTP count in the findings table, the
// worst severity (--fail-on) and the reports like any other; each exchange
// or association has its row (transport, state, IRD/ORD, counts), and DDP
// segments over SCTP count in the opcode table. The expected values are
// the generator's ground truth.
func TestExtTransportsTabulated(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "synthext", "*.pcap"))
	if err != nil || len(paths) < 8 {
		t.Fatalf("synthext captures: %v %v", paths, err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".pcap")
		t.Run(name, func(t *testing.T) {
			truth := readTruth(t, strings.TrimSuffix(path, ".pcap")+".truth.jsonl")
			c := NewCollector()
			for _, r := range testutil.Decode(t, path, flows.Options{}) {
				c.Add(r)
			}

			wantCodes := map[string]int{}
			wantOps := map[int][2]uint64{}
			for _, r := range truth {
				for _, f := range r.Findings {
					wantCodes[f.Code]++
				}
				if r.Type == "ddp" && r.RDMAP != nil {
					v := wantOps[r.RDMAP.Opcode]
					wantOps[r.RDMAP.Opcode] = [2]uint64{v[0] + 1, v[1] + r.PayloadLen}
				}
			}
			gotCodes := map[string]int{}
			for k, a := range c.finds {
				gotCodes[k.code] += a.n
			}
			if !maps.Equal(gotCodes, wantCodes) {
				t.Errorf("findings by code %v, want %v", gotCodes, wantCodes)
			}
			if _, any := c.Worst(); any != (len(wantCodes) > 0) {
				t.Errorf("Worst says findings: %v, truth has %d codes", any, len(wantCodes))
			}
			gotOps := map[int][2]uint64{}
			for _, o := range c.opTotals() {
				op, err := strconv.ParseInt(strings.TrimPrefix(o.Opcode, "0x"), 16, 32)
				if err != nil {
					t.Fatalf("opcode %q", o.Opcode)
				}
				gotOps[int(op)] = [2]uint64{o.Count, o.Octets}
			}
			if !maps.Equal(gotOps, wantOps) {
				t.Errorf("opcodes (segments, payload octets) %v, want %v", gotOps, wantOps)
			}

			for _, r := range truth {
				if r.Type != "conn" {
					continue
				}
				cs := c.row(r.Conn)
				if cs == nil {
					t.Errorf("conn %d: no row", r.Conn)
					continue
				}
				row := cs.row()
				if want := r.Transport + " " + r.State; row.State != want {
					t.Errorf("conn %d: state %q, want %q", r.Conn, row.State, want)
				}
				n := 0
				for _, x := range truth {
					if x.Conn == r.Conn && x.Type != "conn" {
						n += len(x.Findings)
					}
				}
				if row.Findings != n {
					t.Errorf("conn %d: %d findings, want %d", r.Conn, row.Findings, n)
				}
				switch r.Transport {
				case flows.TransportIBCM:
					if row.Messages != r.Messages || row.FPDUs != r.DataPackets {
						t.Errorf("conn %d: %d messages, %d data packets; want %d, %d", r.Conn, row.Messages, row.FPDUs, r.Messages, r.DataPackets)
					}
					if r.InitiatorLID != 0 && row.Initiator != "LID "+strconv.Itoa(r.InitiatorLID) {
						t.Errorf("conn %d: initiator %q, want LID %d", r.Conn, row.Initiator, r.InitiatorLID)
					}
					// The column is the Reply's: the REP's responder
					// resources and initiator depth, "-" without a REP.
					want := "-"
					for _, x := range truth {
						if x.Type == "cm" && x.Conn == r.Conn && x.Msg == "rep" && x.ResponderResources != nil {
							want = strconv.Itoa(*x.ResponderResources) + "/" + strconv.Itoa(*x.InitiatorDepth)
						}
					}
					if row.IRDORD != want {
						t.Errorf("conn %d: Reply IRD/ORD %q, want %q", r.Conn, row.IRDORD, want)
					}
				case flows.TransportSCTP:
					if row.Messages != r.Messages || row.FPDUs != r.Segments || row.Octets != r.Octets {
						t.Errorf("conn %d: %d messages, %d segments, %d octets; want %d, %d, %d",
							r.Conn, row.Messages, row.FPDUs, row.Octets, r.Messages, r.Segments, r.Octets)
					}
					want := "-"
					if r.Enhanced {
						want = strconv.Itoa(r.IRD) + "/" + strconv.Itoa(r.ORD)
					}
					if row.IRDORD != want {
						t.Errorf("conn %d: IRD/ORD %q, want %q", r.Conn, row.IRDORD, want)
					}
				default:
					t.Errorf("conn %d: transport %q", r.Conn, r.Transport)
				}
			}
		})
	}
}

func readTruth(t *testing.T, path string) []truthRec {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []truthRec
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r truthRec
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, r)
	}
	return out
}
